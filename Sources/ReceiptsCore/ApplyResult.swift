/// What one `ReceiptEngine.apply` did: the outcome for the gateway, the statuses and read states to publish.
public struct ApplyResult: Sendable, Hashable {
    /// Accepted (possibly held), duplicate, or rejected with a reason.
    public var outcome: EventOutcome
    /// The new status of every message whose published status changed, in sequence order per
    /// conversation; one entry per message even when the event moved it several times.
    public var changes: [MessageStatus]
    /// The users' own read states the event changed, one per (user, conversation), when the
    /// engine reports them (`ReceiptEngine.reportsReadStates`).
    public var readStates: [ReadStateChange]

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - outcome: What happened to the event.
    ///   - changes: Statuses to publish.
    ///   - readStates: Read states to publish on the users' topics.
    public init(outcome: EventOutcome, changes: [MessageStatus] = [], readStates: [ReadStateChange] = []) {
        self.outcome = outcome
        self.changes = changes
        self.readStates = readStates
    }
}
