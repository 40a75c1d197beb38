/// One step of the writer thread that reached the disk: a group of records written (and synced,
/// under ``FsyncPolicy/always``), or a later sync of groups already written.
///
/// Reported through ``ReceiptLog/init(configuration:logger:onDurable:onFatal:onGroupCommit:)``
/// so that the service can turn it into metrics; the log itself keeps no statistics.
public struct GroupCommit: Sendable, Hashable {
    /// Records in the group; 0 for a sync of groups written earlier (``FsyncPolicy/interval(milliseconds:)``).
    public var records: Int
    /// How long the `fdatasync` took, or nil if this step did not sync.
    public var syncDuration: Duration?
    /// The position this step wrote (and, when it synced, made durable) up to.
    public var end: LogPosition
    /// When the writer thread took the group (or began the sync), in monotonic nanoseconds
    /// (`CLOCK_MONOTONIC`, as the service's latencies).
    public var startedNanoseconds: UInt64
    /// When its `pwrite` ended and its `fdatasync`, if any, began (monotonic nanoseconds).
    public var writtenNanoseconds: UInt64
    /// When the step ended, after its `fdatasync` if it synced (monotonic nanoseconds); what it
    /// wrote is durable from then on (under ``FsyncPolicy/always``, once synced; otherwise once
    /// written).
    public var finishedNanoseconds: UInt64
}
