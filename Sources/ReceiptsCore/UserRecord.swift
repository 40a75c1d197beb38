/// A user known to this worker: a member somewhere, deleted, or with a privacy setting.
struct UserRecord: Sendable, Hashable {
    /// The user id.
    var id: String
    /// The account was deleted: receipts stay, new events are rejected.
    var isDeleted: Bool = false
    /// Reads are shared (the default); when false they look like deliveries to everyone else.
    var sharesReads: Bool = true
    /// 1 + index of the conversation the user got a member slot in most recently, 0 if none;
    /// `MemberRecord.previousConversation` chains back to the first.
    var lastConversation: UInt32 = 0
}
