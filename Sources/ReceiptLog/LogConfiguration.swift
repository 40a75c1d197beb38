/// Where the log lives and how it trades durability for speed.
public struct LogConfiguration: Sendable {
    /// The directory holding segments and snapshots; created if missing.
    public var directory: String
    /// When written groups are forced to disk; see ``FsyncPolicy`` for what each choice risks.
    public var fsyncPolicy: FsyncPolicy = .always
    /// The size in bytes past which the writer starts a new segment file.
    ///
    /// Smaller segments let compaction free space sooner; larger ones mean fewer files.
    public var segmentSize: Int = 64 << 20
    /// The operator's explicit choice to cut the log at mid-log corruption instead of refusing
    /// to start. Everything from the damaged record on is deleted.
    public var cutCorruptionAtStart: Bool = false
    /// The most bytes that may wait for the writer before ``ReceiptLog/append(type:payload:)``
    /// blocks, so a slow disk applies backpressure instead of growing memory without limit.
    public var maxPendingBytes: Int = 64 << 20

    /// Test-only fault injection, see ``FaultInjection``.
    var faultInjection: FaultInjection?

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - directory: The log directory; created if missing.
    ///   - fsyncPolicy: When groups are forced to disk.
    ///   - segmentSize: Roll to a new segment file past this many bytes.
    ///   - cutCorruptionAtStart: Truncate at mid-log corruption instead of refusing to start.
    ///   - maxPendingBytes: Bytes that may wait for the writer before appends block.
    public init(
        directory: String,
        fsyncPolicy: FsyncPolicy = .always,
        segmentSize: Int = 64 << 20,
        cutCorruptionAtStart: Bool = false,
        maxPendingBytes: Int = 64 << 20
    ) {
        self.directory = directory
        self.fsyncPolicy = fsyncPolicy
        self.segmentSize = segmentSize
        self.cutCorruptionAtStart = cutCorruptionAtStart
        self.maxPendingBytes = maxPendingBytes
    }
}

/// A seam for tests to make `fdatasync` fail, which no real file system here does on demand.
///
/// Internal: only `@testable` tests set it. Write failures need no seam (tests point a segment
/// at `/dev/full`).
struct FaultInjection: Sendable {
    /// Called before each data sync of a segment with the count of syncs done so far; a
    /// non-nil result is reported as that sync's `errno`.
    var syncError: @Sendable (_ syncsSoFar: Int) -> Int32?
}
