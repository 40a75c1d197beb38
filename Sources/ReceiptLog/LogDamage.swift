/// Damage found in a log directory: where it is, what it is, and whether it may be cut away.
public struct LogDamage: Sendable, Hashable, CustomStringConvertible {
    /// What is wrong at ``offset``.
    public enum Kind: Sendable, Hashable {
        /// The segment header is missing, short, or fails its checksum.
        case badSegmentHeader
        /// The file ends inside a record header or payload.
        case truncatedRecord
        /// A record's length field is impossible.
        case invalidLength
        /// A record's crc32 does not match its type and payload.
        case checksumMismatch
        /// Zero bytes where a record should start (space allocated but never written).
        case zeroFill
        /// Positions are not contiguous: a segment is missing or overlaps.
        case gap
        /// The snapshot's position does not fall on a record boundary.
        case snapshotNotOnRecordBoundary
    }

    /// The file's name within the log directory.
    public var file: String
    /// The byte offset in ``file`` where the damage starts.
    public var offset: UInt64
    /// What is wrong.
    public var kind: Kind
    /// True when this is a torn tail of the last segment (no valid record follows it), which
    /// recovery truncates on its own; false when it is mid-log corruption that stops start-up.
    public var isTruncatableTail: Bool
    /// Bytes that truncating here drops, counting later segments that a cut deletes.
    public var droppedBytes: UInt64
    /// Records (whole or partial) that truncating here drops; zero-filled space counts as none.
    public var droppedRecords: Int

    public var description: String {
        "\(self.kind) in \(self.file) at offset \(self.offset)"
            + (self.isTruncatableTail ? " (torn tail" : " (mid-log corruption")
            + ", \(self.droppedBytes) bytes, \(self.droppedRecords) records after it)"
    }
}
