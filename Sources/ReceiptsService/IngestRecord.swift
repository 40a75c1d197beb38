public import ReceiptsCore

/// The log record of one ingest frame: the server time it was applied at, then the frame
/// exactly as the gateway sent it.
///
/// Logging the raw frame costs no re-encoding on the hot path; replaying it through the
/// same engine at the same time gives the same state, because the engine is deterministic.
public enum IngestRecord {
    /// Record type of a batch from the acknowledged ingest endpoint.
    public static let acknowledgedBatch: UInt8 = 1
    /// Record type of a batch from the fire-and-forget ingest endpoint.
    public static let unacknowledgedBatch: UInt8 = 2

    private static let headerSize = MemoryLayout<Int64>.size

    /// Builds the record payload for a frame applied at `time`.
    public static func encode(time: Timestamp, frame: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: headerSize + frame.count) { buffer, count in
            let raw = UnsafeMutableRawBufferPointer(buffer)
            raw.storeBytes(of: time.milliseconds.littleEndian, as: Int64.self)
            if let base = frame.baseAddress, !frame.isEmpty {
                (raw.baseAddress! + headerSize).copyMemory(from: base, byteCount: frame.count)
            }
            count = headerSize + frame.count
        }
    }

    /// Builds the record payload for a frame held in an array.
    public static func encode(time: Timestamp, frame: [UInt8]) -> [UInt8] {
        frame.withUnsafeBytes { encode(time: time, frame: $0) }
    }

    /// Splits a record payload into its time and frame.
    /// - Returns: nil if the payload is too short to hold the time.
    public static func decode(_ payload: UnsafeRawBufferPointer) -> (time: Timestamp, frame: UnsafeRawBufferPointer)? {
        guard payload.count >= headerSize else { return nil }
        let milliseconds = Int64(littleEndian: payload.loadUnaligned(as: Int64.self))
        return (Timestamp(milliseconds: milliseconds), UnsafeRawBufferPointer(rebasing: payload[headerSize...]))
    }
}
