/// The frame rules both replication messages share (deploy/REPLICATION.md section 4.3): a
/// protobuf body in frame 1, and for records and snapshot chunks their raw bytes in frame 2.
///
/// The bounds follow the design: the primary sends at most 1 MiB of records per message, or one
/// record if it is larger, and snapshot files in 1 MiB chunks; a body holds numbers, a term
/// history and an engine-settings text, far below 1 MiB.
public enum ReplicationFrames {
    /// The largest body (frame 1) of a replication message or request.
    public static let maxBodyBytes = 1 << 20
    /// The most records bytes a `Records` message carries when they are more than one record.
    public static let recordsBatchBytes = 1 << 20
    /// The largest records frame: one record of the log's largest payload (256 MiB,
    /// `RecordFormat.maxPayload`) with its 9-byte header, sent alone.
    public static let maxRecordsBytes = (256 << 20) + 9
    /// The largest snapshot chunk frame.
    public static let maxChunkBytes = 1 << 20

    /// The body of `frames` once their count is one `allowed` and the body is within
    /// ``maxBodyBytes``.
    /// - Parameters:
    ///   - frames: The frames of one message, routing frames removed.
    ///   - name: The message type, for the refusal.
    /// - Throws: `WireError` `.wrongFrameCount` or `.frameTooLarge`.
    static func body(of frames: [[UInt8]], allowed: ClosedRange<Int>, name: String) throws(WireError) -> [UInt8] {
        guard allowed.contains(frames.count) else {
            throw WireError(
                code: .wrongFrameCount,
                message: "\(name) has \(frames.count) frames, not \(allowed.lowerBound) to \(allowed.upperBound)"
            )
        }
        try check(frames[0], within: maxBodyBytes, "\(name) body")
        return frames[0]
    }

    /// Frame 2 of a message whose kind has one, within `bound` bytes.
    /// - Throws: `WireError` `.wrongFrameCount` when there is no frame 2, `.frameTooLarge` when
    ///   it is over `bound`.
    static func payload(of frames: [[UInt8]], within bound: Int, kind: String) throws(WireError) -> [UInt8] {
        guard frames.count == 2 else {
            throw WireError(code: .wrongFrameCount, message: "ReplicationMessage \(kind) has no frame 2")
        }
        try check(frames[1], within: bound, "ReplicationMessage \(kind) frame 2")
        return frames[1]
    }

    /// Refuses a frame 2 for a kind that has none.
    static func noPayload(in frames: [[UInt8]], kind: String) throws(WireError) {
        guard frames.count == 1 else {
            throw WireError(
                code: .wrongFrameCount,
                message: "ReplicationMessage \(kind) has \(frames.count) frames, not 1"
            )
        }
    }

    private static func check(_ frame: [UInt8], within bound: Int, _ what: String) throws(WireError) {
        guard frame.count <= bound else {
            throw WireError(code: .frameTooLarge, message: "\(what) of \(frame.count) bytes exceeds \(bound)")
        }
    }
}
