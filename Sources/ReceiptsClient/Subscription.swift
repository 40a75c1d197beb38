import ReceiptsWire

/// A subscription as the loop keeps it: its Clone tracker and its repairs. Its updates come
/// through the loop's shared SUB sockets (``UpdateListeners``).
struct Subscription {
    let topic: SubscriptionTopic
    let output: AsyncStream<StatusUpdate>.Continuation
    var tracker = CloneTracker()
    /// Its snapshots, per conversation; a one-conversation subscription also takes the slow
    /// joiner's second snapshot.
    var repairs: RepairSchedule<String>
    /// Conversations whose owner a NOT_OWNER answer named, or whose snapshot came from another
    /// worker than the routing count's owner: their repairs go there first.
    var owners: [String: Int] = [:]
}
