/// When the log forces written records to stable storage, and so what a crash can lose.
///
/// The policy decides when ``ReceiptLog/durablePosition`` advances, and therefore when the
/// service may acknowledge a batch. Only ``always`` keeps every acknowledged batch across a
/// power cut; the others trade that guarantee for fewer `fdatasync` calls.
public enum FsyncPolicy: Sendable, Hashable {
    /// Every group is written and `fdatasync`ed before it is reported durable (the default).
    ///
    /// Risks nothing that was acknowledged: a crash of the process, the kernel or the machine
    /// keeps every batch reported durable. Throughput comes from group commit: every batch
    /// that arrives while one `fdatasync` runs shares the next one.
    case always

    /// Groups are reported durable once written to the kernel; `fdatasync` runs at most every
    /// `milliseconds`.
    ///
    /// Survives a crash of the process (the page cache keeps the data), but a power cut or a
    /// kernel crash loses up to `milliseconds` of acknowledged batches. This is the periodic
    /// fsync default that lost acknowledged writes in Jepsen's 2025 NATS analysis: use it only
    /// where losing recent acknowledged writes is acceptable.
    case interval(milliseconds: Int)

    /// Groups are reported durable once written to the kernel; the log syncs only when it
    /// rolls a segment, writes a snapshot, or is flushed or closed.
    ///
    /// Survives a crash of the process, but a power cut or a kernel crash can lose every batch
    /// acknowledged since the last sync, which may be minutes of data. For benchmarks and
    /// throw-away data only.
    case none
}
