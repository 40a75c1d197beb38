/// What one `ReceiptEngine.apply` did: the outcome for the gateway, the statuses and read states to publish.
public struct ApplyResult: Sendable, Hashable {
    /// Accepted (possibly held), duplicate, or rejected with a reason.
    public var outcome: EventOutcome
    /// The new status of every message whose published status changed, in sequence order per
    /// conversation; one entry per message even when the event moved it several times.
    public var changes: [MessageStatus]
    /// One key per entry of `changes`, same order: the message's conversation index in this
    /// engine (high 32 bits) and its sequence (low 32 bits). It names the message until the
    /// engine drops released conversations (a committed move renumbers those after them), and
    /// hashes far more cheaply than its ids (batch merging uses it).
    public var changeKeys: [UInt64]
    /// The users' own read states the event changed, one per (user, conversation), when the
    /// engine reports them (`ReceiptEngine.reportsReadStates`).
    public var readStates: [ReadStateChange]

    /// Creates a result.
    ///
    /// - Parameters:
    ///   - outcome: What happened to the event.
    ///   - changes: Statuses to publish.
    ///   - changeKeys: One key per change (see ``changeKeys``).
    ///   - readStates: Read states to publish on the users' topics.
    public init(
        outcome: EventOutcome,
        changes: [MessageStatus] = [],
        changeKeys: [UInt64] = [],
        readStates: [ReadStateChange] = []
    ) {
        self.outcome = outcome
        self.changes = changes
        self.changeKeys = changeKeys
        self.readStates = readStates
    }
}
