/// A server time: milliseconds since the Unix epoch, UTC.
///
/// Timestamps are integers so that the log, the wire and the engine agree exactly,
/// and replaying the log gives the same state.
public struct Timestamp: Hashable, Comparable, Sendable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.milliseconds < rhs.milliseconds
    }
}
