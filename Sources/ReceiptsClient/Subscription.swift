import ReceiptsWire
import ZeroMQ

/// A subscription as the loop keeps it: its SUB sockets, its Clone tracker and its repairs.
struct Subscription {
    let topic: SubscriptionTopic
    /// One SUB per worker that publishes the topic (only the owner, for a conversation).
    let sockets: [ZMQSocket]
    let output: AsyncStream<StatusUpdate>.Continuation
    var tracker = CloneTracker()
    /// Conversations whose snapshot is asked for now.
    var repairing: Set<String> = []
    /// Conversations to repair once their time comes (a retry, or a consumer with no room).
    var repairsDue: [String: ContinuousClock.Instant] = [:]
    /// When to take the one-conversation subscription's second snapshot (slow joiner).
    var settleAt: ContinuousClock.Instant?

    /// The earliest timer of this subscription.
    var nextTimer: ContinuousClock.Instant? {
        let due = repairsDue.values.min()
        guard let settleAt else { return due }
        return min(due ?? settleAt, settleAt)
    }
}
