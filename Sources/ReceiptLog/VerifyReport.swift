/// The result of ``ReceiptLog/verify(directory:)``: what opening the log would find.
public struct VerifyReport: Sendable {
    /// A snapshot file and whether it is usable.
    public struct Snapshot: Sendable, Hashable {
        /// The file name.
        public var file: String
        /// The position its name claims.
        public var position: LogPosition
        /// The size of the file.
        public var bytes: UInt64
        /// Whether header and payload checksums hold.
        public var isValid: Bool
    }

    /// Segment files found.
    public var segments: Int
    /// Valid records in all segments (before the first damage).
    public var records: Int
    /// Bytes in all segment files.
    public var bytes: UInt64
    /// Snapshot files, oldest first.
    public var snapshots: [Snapshot]
    /// The snapshot recovery would start from.
    public var recoverySnapshot: LogPosition?
    /// Records recovery would replay after that snapshot.
    public var recordsToReplay: Int
    /// The end position of the valid log.
    public var endPosition: LogPosition
    /// The first damage, if any. When ``LogDamage/isTruncatableTail`` is true, opening the log
    /// truncates it and starts; otherwise opening refuses unless told to cut there.
    public var problem: LogDamage?
    /// Leftover snapshot temporary files that opening would remove.
    public var temporaryFiles: [String]
    /// Whether the directory holds the marker of a seed that did not complete: opening would
    /// delete every segment and snapshot reported here and start an empty log.
    public var interruptedSeed: Bool

    /// True when opening would change nothing.
    public var isClean: Bool {
        self.problem == nil && self.temporaryFiles.isEmpty && self.snapshots.allSatisfy(\.isValid)
            && !self.interruptedSeed
    }
}
