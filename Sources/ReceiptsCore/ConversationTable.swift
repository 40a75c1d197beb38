/// Conversation id -> index in the engine's conversation array: a `SlotTable` over the states'
/// own ids (a `[String: UInt32]` would hold each id a second time in a 20-byte bucket at 0.75
/// load at most, and hash it with SipHash).
struct ConversationTable: Sendable {
    /// Conversation indexes by the hash of the id.
    private var table = SlotTable()

    init() {}

    /// The index of `id`, or nil.
    @inline(__always)
    func find(_ id: String, in conversations: [ConversationState]) -> UInt32? {
        let hash = ByteHash.hash(id)
        return conversations.withUnsafeBufferPointer { conversations in
            table.find(hash: hash) { conversations[$0].id == id }.map { UInt32($0) }
        }
    }

    /// Records the conversation just appended to `conversations`.
    mutating func didAppend(to conversations: [ConversationState]) {
        if table.needsRebuild(forCount: conversations.count) {
            table.rebuild(count: conversations.count) { ByteHash.hash(conversations[$0].id) }
        } else {
            table.insert(hash: ByteHash.hash(conversations[conversations.count - 1].id), position: conversations.count - 1)
        }
    }
}
