/// Snapshot bytes that cannot be turned back into an engine.
///
/// Decoding checks every length and index it reads, so bad bytes end here, never in a crash.
public struct SnapshotDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem the bytes have.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: Hashable, Sendable {
            case badMagic, unsupportedVersion, truncated, corrupt
        }

        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// The bytes do not start with the snapshot magic: not a snapshot.
        public static let badMagic = Code(.badMagic)
        /// A snapshot written by a format version this build does not read.
        public static let unsupportedVersion = Code(.unsupportedVersion)
        /// The bytes end before the snapshot does.
        public static let truncated = Code(.truncated)
        /// A value is out of range or inconsistent with another.
        public static let corrupt = Code(.corrupt)

        public var description: String {
            switch value {
            case .badMagic: "badMagic"
            case .unsupportedVersion: "unsupportedVersion"
            case .truncated: "truncated"
            case .corrupt: "corrupt"
            }
        }
    }

    /// The kind of problem.
    public var code: Code
    /// What exactly was wrong and where.
    public var message: String
    /// The underlying error, if any.
    public var cause: (any Error)?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of problem.
    ///   - message: What exactly was wrong and where.
    ///   - cause: The underlying error, if any.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { "\(code): \(message)" }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
    }
}
