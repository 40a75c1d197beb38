/// What one ``ReceiptLog/writeSnapshot(_:covering:)`` wrote and freed.
public struct CompactionReport: Sendable, Hashable {
    /// The position the new snapshot covers.
    public var position: LogPosition
    /// The size of the snapshot file, header included.
    public var snapshotBytes: UInt64
    /// Segment files deleted because the previous snapshot covers them.
    public var segmentsRemoved: Int
    /// Bytes freed by deleting segments.
    public var bytesRemoved: UInt64
    /// Snapshot files deleted because two newer generations exist.
    public var snapshotsRemoved: Int
}
