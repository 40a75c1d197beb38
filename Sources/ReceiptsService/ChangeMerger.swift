import ReceiptsCore

/// Merges a batch's status changes into one per message, carrying its final state, and
/// gathers its read-state changes (each kept: every one is a state the user's devices show).
///
/// A batch becomes durable at one instant, so nothing real-time is lost by publishing each
/// changed message once. The index is only built once a second event changes something, so
/// single-event frames pay nothing for it.
struct ChangeMerger {
    private(set) var changes = Publication()
    private var indexes: [MessageKey: Int]?

    /// Adds one event's result.
    mutating func add(_ result: ApplyResult) {
        changes.readStates += result.readStates
        add(result.changes)
    }

    private mutating func add(_ newChanges: [MessageStatus]) {
        guard !newChanges.isEmpty else { return }
        guard !changes.statuses.isEmpty else {
            changes.statuses = newChanges
            return
        }
        if indexes == nil {
            var built: [MessageKey: Int] = [:]
            for (index, change) in changes.statuses.enumerated() {
                built[MessageKey(conversation: change.conversation, sequence: change.sequence)] = index
            }
            indexes = built
        }
        for change in newChanges {
            let key = MessageKey(conversation: change.conversation, sequence: change.sequence)
            if let index = indexes?[key] {
                changes.statuses[index] = change
            } else {
                indexes?[key] = changes.statuses.count
                changes.statuses.append(change)
            }
        }
    }
}

/// What a batch publishes once it is durable.
struct Publication {
    /// Message statuses, one per message.
    var statuses: [MessageStatus] = []
    /// Users' read states, in the order the events changed them.
    var readStates: [ReadStateChange] = []

    var isEmpty: Bool { statuses.isEmpty && readStates.isEmpty }
}
