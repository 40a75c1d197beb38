/// A user known to this worker: a member somewhere, deleted, or with a privacy setting.
struct UserRecord: Sendable, Hashable {
    /// The user id.
    var id: String
    /// The account was deleted: receipts stay, new events are rejected.
    var isDeleted: Bool = false
    /// Reads are shared (the default); when false they look like deliveries to everyone else.
    var sharesReads: Bool = true
    /// 1 + index in the engine's `conversationLinks` of the conversation the user got a member
    /// slot in most recently, 0 if none; the links chain back to the first.
    var lastConversationLink: UInt32 = 0
}

/// One entry of a user's chain of conversations (one flat array for all users instead of an
/// array allocation per user).
struct ConversationLink: Sendable, Hashable {
    /// The conversation index.
    var conversation: UInt32
    /// 1 + index of the same user's previous link, 0 if none.
    var previous: UInt32
}
