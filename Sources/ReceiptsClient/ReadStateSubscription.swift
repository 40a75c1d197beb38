import ReceiptsWire

/// A read-state subscription as the loop keeps it: its tracker and its repairs, one per worker.
/// Its updates come through the loop's shared SUB sockets (``UpdateListeners``).
struct ReadStateSubscription {
    let topic: ReadStateTopic
    let output: AsyncStream<ReadStateUpdate>.Continuation
    var tracker: ReadStateTracker
    /// Its snapshots, one per worker, and the slow joiner's second round.
    var repairs: RepairSchedule<Int>

    init(
        topic: ReadStateTopic,
        output: AsyncStream<ReadStateUpdate>.Continuation,
        settleAt: ContinuousClock.Instant
    ) {
        self.topic = topic
        self.output = output
        tracker = ReadStateTracker(user: topic.user)
        repairs = RepairSchedule(settleAt: settleAt)
    }
}
