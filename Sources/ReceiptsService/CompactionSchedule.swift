/// When the loop compacts: by size, by time, on request, one at a time, with a growing pause
/// after failures so a full disk does not turn into a tight loop of snapshot attempts.
struct CompactionSchedule {
    /// A compaction thread is running.
    var isRunning = false
    /// Monotonic time the last compaction started.
    var lastStartedMonotonic: Int64 = 0
    /// No automatic compaction before this monotonic time (after a failure).
    var notBeforeMonotonic: Int64 = 0
    /// The pause after the next failure.
    private var backoffMilliseconds: Int64 = 1000
    /// Query clients waiting for the running compaction's result.
    var requesters: [RequestEnvelope] = []

    private static let maxBackoffMilliseconds: Int64 = 300_000

    /// Records a failure: automatic compaction pauses, twice as long each time, up to 5 minutes.
    mutating func failed(now: Int64) {
        notBeforeMonotonic = now + backoffMilliseconds
        backoffMilliseconds = min(backoffMilliseconds * 2, Self.maxBackoffMilliseconds)
    }

    /// Records a success: the pause after failures starts small again.
    mutating func succeeded() {
        backoffMilliseconds = 1000
        notBeforeMonotonic = 0
    }
}
