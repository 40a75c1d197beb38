import ReceiptsWire

/// A subscription as the loop keeps it: its Clone tracker and its repairs. Its updates come
/// through the loop's shared SUB sockets (``UpdateListeners``).
struct Subscription {
    let topic: SubscriptionTopic
    let output: AsyncStream<StatusUpdate>.Continuation
    var tracker = CloneTracker()
    /// Conversations whose snapshot is asked for now.
    var repairing: Set<String> = []
    /// Conversations to repair once their time comes (a retry, or a consumer with no room).
    var repairsDue: [String: ContinuousClock.Instant] = [:]
    /// When to take the one-conversation subscription's second snapshot (slow joiner).
    var settleAt: ContinuousClock.Instant?
    /// Conversations whose owner a NOT_OWNER answer named, or whose snapshot came from another
    /// worker than the routing count's owner: their repairs go there first.
    var owners: [String: Int] = [:]

    /// The earliest timer of this subscription.
    var nextTimer: ContinuousClock.Instant? {
        let due = repairsDue.values.min()
        guard let settleAt else { return due }
        return min(due ?? settleAt, settleAt)
    }
}
