/// What opening the log found and changed, for the log line and counters of the service.
public struct RecoveryReport: Sendable {
    /// The position of the snapshot recovery starts from, if any.
    public var snapshotPosition: LogPosition?
    /// Snapshot files that failed validation and were set aside (renamed to `*.corrupt`);
    /// recovery fell back to an older snapshot.
    public var invalidSnapshots: [String] = []
    /// Bytes truncated from a torn tail, or cut at corruption when the operator asked for it.
    public var truncatedBytes: UInt64 = 0
    /// Records (whole or partial) in the truncated bytes.
    public var droppedRecords: Int = 0
    /// The segment that was truncated, if any.
    public var truncatedFile: String?
    /// The damage recovery truncated: a torn tail, or mid-log corruption cut because
    /// ``LogConfiguration/cutCorruptionAtStart`` was set.
    public var damage: LogDamage?
    /// Leftover temporary files from an interrupted snapshot that were removed.
    public var removedTemporaryFiles: [String] = []
    /// Whether the directory held the marker of a seed that did not complete
    /// (``ReceiptLog/seed(directory:from:beforeCompleting:)``), so recovery deleted every
    /// segment and snapshot and the log starts empty.
    public var discardedInterruptedSeed: Bool = false
    /// The number of records ``ReceiptLog/replay(_:)`` will deliver.
    public var recordsToReplay: Int = 0
    /// The end of the recovered log, where appending continues.
    public var endPosition: LogPosition = .zero
}
