public import ReceiptsCore

/// The log record that expires old messages: written before compaction applies retention to
/// the live state, so that a replay after a crash expires exactly the same messages at
/// exactly the same point of the history.
public enum RetentionRecord {
    /// Record type of a retention cutoff.
    public static let type: UInt8 = 3

    /// The payload: the cutoff time (messages sent before it leave the state).
    public static func encode(cutoff: Timestamp) -> [UInt8] {
        withUnsafeBytes(of: cutoff.milliseconds.littleEndian) { Array($0) }
    }

    /// The cutoff, or nil if the payload has the wrong size.
    public static func decode(_ payload: UnsafeRawBufferPointer) -> Timestamp? {
        guard payload.count == MemoryLayout<Int64>.size else { return nil }
        return Timestamp(milliseconds: Int64(littleEndian: payload.loadUnaligned(as: Int64.self)))
    }
}
