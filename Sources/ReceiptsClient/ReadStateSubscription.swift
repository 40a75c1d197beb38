import ReceiptsWire

/// A read-state subscription as the loop keeps it: its tracker and its repairs, one per worker.
/// Its updates come through the loop's shared SUB sockets (``UpdateListeners``).
struct ReadStateSubscription {
    let topic: ReadStateTopic
    let output: AsyncStream<ReadStateUpdate>.Continuation
    var tracker: ReadStateTracker
    /// Workers whose snapshot is asked for now.
    var repairing: Set<Int> = []
    /// Workers to repair once their time comes (a retry, or a consumer with no room).
    var repairsDue: [Int: ContinuousClock.Instant] = [:]
    /// When to take the second round of snapshots (slow joiner).
    var settleAt: ContinuousClock.Instant?

    init(topic: ReadStateTopic, output: AsyncStream<ReadStateUpdate>.Continuation) {
        self.topic = topic
        self.output = output
        tracker = ReadStateTracker(user: topic.user)
    }

    /// The earliest timer of this subscription.
    var nextTimer: ContinuousClock.Instant? {
        let due = repairsDue.values.min()
        guard let settleAt else { return due }
        return min(due ?? settleAt, settleAt)
    }
}
