/// An error from the storage engine: what went wrong, and for damage on disk, where.
///
/// A struct with an open set of codes rather than an enum, so that codes can be added without
/// breaking callers that switch on them.
public struct LogError: Error, CustomStringConvertible {
    /// The kind of failure.
    public var code: Code
    /// What happened, for an operator.
    public var message: String
    /// The underlying error, typically a ``SystemCallError``.
    public var cause: (any Error)?
    /// The file involved, as a path, when there is one.
    public var file: String?
    /// The byte offset in ``file`` where the problem starts, for damage on disk.
    public var offset: UInt64?

    /// Creates an error.
    public init(code: Code, message: String, cause: (any Error)? = nil, file: String? = nil, offset: UInt64? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
        self.file = file
        self.offset = offset
    }

    public var description: String {
        var text = "\(self.code): \(self.message)"
        if let file = self.file {
            text += " (file: \(file)"
            if let offset = self.offset {
                text += ", offset: \(offset)"
            }
            text += ")"
        }
        if let cause = self.cause {
            text += " (cause: \(cause))"
        }
        return text
    }
}

extension LogError {
    /// The classification of a ``LogError``.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case io
            case corruption
            case gap
            case invalidSnapshot
            case fsyncFailed
            case closed
            case invalidArgument
            case locked
            case compacted
            case notRecordBoundary
            case positionMismatch
        }

        private var value: Value

        private init(_ value: Value) {
            self.value = value
        }

        /// A system call failed (open, read, write, rename, ...).
        public static var io: Self { Self(.io) }
        /// A record or header is damaged somewhere other than the truncatable tail.
        public static var corruption: Self { Self(.corruption) }
        /// A segment is missing: the log's positions are not contiguous.
        public static var gap: Self { Self(.gap) }
        /// No usable snapshot, or a snapshot that does not fit the log.
        public static var invalidSnapshot: Self { Self(.invalidSnapshot) }
        /// `fdatasync`/`fsync` failed. Fatal: after a failed fsync, Linux may report later ones
        /// as successful although the data never reached the disk (fsyncgate), so the only safe
        /// recovery is to restart from what the log holds.
        public static var fsyncFailed: Self { Self(.fsyncFailed) }
        /// The log is closed, or stopped after a fatal error.
        public static var closed: Self { Self(.closed) }
        /// The caller passed a value the log cannot accept (an oversized record, a position
        /// beyond the end of the log).
        public static var invalidArgument: Self { Self(.invalidArgument) }
        /// Another process (or another open log in this one) holds the directory.
        public static var locked: Self { Self(.locked) }
        /// The position is before the oldest segment the log keeps: compaction deleted the
        /// records there (a shipper then sends a snapshot instead), or, for a truncation, no
        /// snapshot is left to recover from below it.
        public static var compacted: Self { Self(.compacted) }
        /// The position falls inside a record, not at the start of one.
        public static var notRecordBoundary: Self { Self(.notRecordBoundary) }
        /// An append at a given position named a position other than the log's appended end
        /// (a standby that missed or repeated records).
        public static var positionMismatch: Self { Self(.positionMismatch) }

        public var description: String {
            String(describing: self.value)
        }
    }
}
