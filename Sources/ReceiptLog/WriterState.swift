/// The state appenders and the writer thread share under one `Mutex`.
///
/// Appenders copy records into `pending`; the writer takes the whole buffer at once (a group),
/// writes it with one write and one sync, and publishes progress here.
struct WriterState {
    /// Records appended but not yet taken by the writer.
    var pending: [UInt8]
    /// The log position of `pending[0]`.
    var pendingStart: UInt64
    /// How many records `pending` holds (reported per group commit).
    var pendingRecords = 0
    /// Positions inside or at the end of `pending` where a new segment must begin.
    var pendingRolls: [UInt64] = []
    /// The end of everything appended.
    var appended: UInt64
    /// The start position of the segment the next append goes into.
    var appendSegmentStart: UInt64
    /// Set by compaction: start a new segment at the next append so old ones can be deleted.
    var rollRequested = false
    /// Everything before this is written to the segment files.
    var written: UInt64
    /// Everything before this is written and synced.
    var synced: UInt64
    /// `flush` and compaction ask the writer to sync up to here, whatever the policy.
    var syncRequested: UInt64
    /// Set once by the writer on a write or sync error; the log accepts nothing after it.
    var failure: LogError?
    /// Set by `close`: the writer drains, syncs and exits.
    var closing = false
    /// True while the writer sleeps on its semaphore, so only the first append wakes it.
    var writerIdle = false
    /// Threads waiting for the writer's progress; all are woken after each step.
    var waiters: [Semaphore] = []
    /// Start positions of the segment files, ascending; the last is the one being written.
    var segments: [UInt64]
    /// Positions of the snapshot files kept, ascending.
    var snapshots: [UInt64]
    /// The position each held ``LogPin`` keeps, by pin: compaction deletes no segment that
    /// holds one of them or anything after it.
    var pins: [Int: UInt64] = [:]
    /// The key of the next pin.
    var nextPin = 0
}
