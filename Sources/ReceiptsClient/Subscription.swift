import ReceiptsWire
import ZeroMQ

/// A subscription as the loop keeps it: its SUB sockets, its Clone tracker and its repairs.
struct Subscription {
    /// One SUB connected to one worker's PUB endpoint.
    struct Listener {
        /// The worker's ordinal: updates from it are told apart from another worker's (a
        /// conversation's publisher changes when it moves between workers).
        let worker: Int
        let socket: ZMQSocket
    }

    let topic: SubscriptionTopic
    /// One SUB per worker the client knows, whatever the topic: a conversation moved between
    /// workers is published by its new owner, so every worker may publish any topic (a PUB
    /// filters by topic on the publisher's side, so a worker that publishes none of it sends
    /// nothing). Grows when a repair follows NOT_OWNER to a worker not listened to yet.
    var listeners: [Listener]
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
