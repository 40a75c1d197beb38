import CReceiptsProto

/// The outcome of a compaction request (`receipts.v1.CompactResult`).
public struct CompactResult: Hashable, Sendable {
    /// Bytes of the snapshot written.
    public var snapshotBytes: UInt64
    /// Log segments removed.
    public var segmentsRemoved: Int
    /// Messages removed by retention.
    public var messagesExpired: UInt64

    /// Creates a compaction outcome.
    /// - Parameters:
    ///   - snapshotBytes: Bytes of the snapshot written.
    ///   - segmentsRemoved: Log segments removed.
    ///   - messagesExpired: Messages removed by retention.
    public init(snapshotBytes: UInt64, segmentsRemoved: Int, messagesExpired: UInt64) {
        self.snapshotBytes = snapshotBytes
        self.segmentsRemoved = segmentsRemoved
        self.messagesExpired = messagesExpired
    }
}

extension CompactResult {
    init(wire result: Receipts__V1__CompactResult) {
        self.init(
            snapshotBytes: result.snapshot_bytes,
            segmentsRemoved: Int(result.segments_removed),
            messagesExpired: result.messages_expired
        )
    }

    /// The outcome as a C message; `segmentsRemoved` is clamped into `uint32`.
    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__CompactResult> {
        let result = arena.message(receipts__v1__compact_result__init)
        result.pointee.snapshot_bytes = snapshotBytes
        result.pointee.segments_removed = UInt32(clamping: segmentsRemoved)
        result.pointee.messages_expired = messagesExpired
        return result
    }
}
