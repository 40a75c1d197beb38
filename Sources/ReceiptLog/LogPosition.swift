/// A global byte offset in the log.
///
/// Segments hold contiguous ranges of positions, so a position names one place in the whole
/// log regardless of which segment file holds it. Positions count record bytes only (segment
/// headers are not part of the range), and a record's position is where it ends, so "durable
/// up to P" covers every record whose end is at or before P.
public struct LogPosition: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The byte offset from the start of the log.
    public var offset: UInt64

    /// Creates a position at a global byte offset.
    public init(offset: UInt64) {
        self.offset = offset
    }

    /// The start of an empty log.
    public static let zero = LogPosition(offset: 0)

    public static func < (lhs: LogPosition, rhs: LogPosition) -> Bool {
        lhs.offset < rhs.offset
    }

    public var description: String {
        "@\(self.offset)"
    }
}
