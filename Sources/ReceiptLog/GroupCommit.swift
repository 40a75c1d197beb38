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
}
