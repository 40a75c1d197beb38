/// What one `ReceiptEngine.apply` did: the outcome for the gateway and the statuses to publish.
public struct ApplyResult: Sendable, Hashable {
    /// Accepted (possibly held), duplicate, or rejected with a reason.
    public var outcome: EventOutcome
    /// The new status of every message whose published status changed, in sequence order per
    /// conversation; one entry per message even when the event moved it several times.
    public var changes: [MessageStatus]

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - outcome: What happened to the event.
    ///   - changes: Statuses to publish.
    public init(outcome: EventOutcome, changes: [MessageStatus] = []) {
        self.outcome = outcome
        self.changes = changes
    }
}
