/// Sizes and totals an operator watches; everything that can silently go wrong is counted.
public struct EngineCounters: Sendable, Hashable {
    /// Receipts currently held for messages that have not arrived.
    public var heldReceipts: Int
    /// Held receipts dropped because their message did not arrive in time (total).
    public var droppedPendingReceipts: Int
    /// Held receipts discarded when their message arrived because the user was not a recipient,
    /// or it was not a reply in the thread the receipt named (total).
    public var discardedHeldReceipts: Int
    /// Conversations known to this worker.
    public var conversations: Int
    /// Messages currently retained.
    public var messages: Int
    /// (conversation, member) slots, current and former members.
    public var members: Int
    /// Users known to this worker (members, deleted users, privacy settings).
    public var users: Int
    /// Event sources whose anti-replay windows are kept.
    public var eventSources: Int
    /// Messages removed by retention (total).
    public var expiredMessages: Int

    /// Creates counters.
    public init(
        heldReceipts: Int = 0,
        droppedPendingReceipts: Int = 0,
        discardedHeldReceipts: Int = 0,
        conversations: Int = 0,
        messages: Int = 0,
        members: Int = 0,
        users: Int = 0,
        eventSources: Int = 0,
        expiredMessages: Int = 0
    ) {
        self.heldReceipts = heldReceipts
        self.droppedPendingReceipts = droppedPendingReceipts
        self.discardedHeldReceipts = discardedHeldReceipts
        self.conversations = conversations
        self.messages = messages
        self.members = members
        self.users = users
        self.eventSources = eventSources
        self.expiredMessages = expiredMessages
    }
}
