import ReceiptsCore

/// Merges a batch's status changes into one per message, carrying its final state.
///
/// A batch becomes durable at one instant, so nothing real-time is lost by publishing each
/// changed message once. The index is only built once a second event changes something, so
/// single-event frames pay nothing for it.
struct ChangeMerger {
    private(set) var changes: [MessageStatus] = []
    private var indexes: [MessageKey: Int]?

    mutating func add(_ newChanges: [MessageStatus]) {
        guard !newChanges.isEmpty else { return }
        guard !changes.isEmpty else {
            changes = newChanges
            return
        }
        if indexes == nil {
            var built: [MessageKey: Int] = [:]
            for (index, change) in changes.enumerated() {
                built[MessageKey(conversation: change.conversation, sequence: change.sequence)] = index
            }
            indexes = built
        }
        for change in newChanges {
            let key = MessageKey(conversation: change.conversation, sequence: change.sequence)
            if let index = indexes?[key] {
                changes[index] = change
            } else {
                indexes?[key] = changes.count
                changes.append(change)
            }
        }
    }
}
