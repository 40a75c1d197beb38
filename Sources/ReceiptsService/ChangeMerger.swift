import ReceiptsCore

/// Merges a batch's status changes into one per message, carrying its final state, and
/// gathers its read-state changes (each kept: every one is a state the user's devices show).
///
/// A batch becomes durable at one instant, so nothing real-time is lost by publishing each
/// changed message once. Messages are told apart by the engine's keys (`ApplyResult.changeKeys`),
/// integers that hash in a few instructions where the ids' strings took hundreds. The index is
/// only built once a second event changes something, so single-event frames pay nothing for it.
struct ChangeMerger {
    private(set) var changes = Publication()
    private var indexes: [UInt64: Int]?
    /// Events in the batch: room for as many messages is made once, not grown step by step.
    private let events: Int

    /// A merger for a batch of `events` events.
    init(events: Int) {
        self.events = events
    }

    /// Adds one event's result.
    mutating func add(_ result: ApplyResult) {
        if !result.readStates.isEmpty { changes.readStates += result.readStates }
        guard !result.changes.isEmpty else { return }
        guard !changes.statuses.isEmpty else {
            changes.statuses = result.changes
            changes.keys = result.changeKeys
            return
        }
        if indexes == nil {
            var built: [UInt64: Int] = [:]
            built.reserveCapacity(events)
            for (index, key) in changes.keys.enumerated() { built[key] = index }
            indexes = built
            changes.statuses.reserveCapacity(events)
            changes.keys.reserveCapacity(events)
        }
        for (change, key) in zip(result.changes, result.changeKeys) {
            if let index = indexes?[key] {
                changes.statuses[index] = change
            } else {
                indexes?[key] = changes.statuses.count
                changes.statuses.append(change)
                changes.keys.append(key)
            }
        }
    }
}

/// What a batch publishes once it is durable.
struct Publication {
    /// Message statuses, one per message.
    var statuses: [MessageStatus] = []
    /// The engine's key of each status, same order (`ApplyResult.changeKeys`): the publisher
    /// finds the conversation's stream by the index in it, not by hashing its id.
    var keys: [UInt64] = []
    /// Users' read states, in the order the events changed them.
    var readStates: [ReadStateChange] = []
}
