import CReceiptsProto

/// A sender's answer to an export in a worker count change (`receipts.v1.ExportResult`).
public struct ExportResult: Hashable, Sendable {
    /// The conversations in `state`, frozen on the sender.
    public var conversations: [String]
    /// Their state, for the receiver's import.
    public var state: [UInt8]
    /// How many more conversations go to the same receiver after these.
    public var remaining: Int

    /// Creates an export answer.
    public init(conversations: [String], state: [UInt8], remaining: Int) {
        self.conversations = conversations
        self.state = state
        self.remaining = remaining
    }
}

extension ExportResult {
    init(wire m: Receipts__V1__ExportResult?) {
        self.init(
            conversations: String.array(wire: m?.conversation_ids, count: m?.n_conversation_ids ?? 0),
            state: m.map { [UInt8](wire: $0.state) } ?? [],
            remaining: Int(m?.remaining ?? 0)
        )
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__ExportResult> {
        let m = arena.message(receipts__v1__export_result__init)
        (m.pointee.n_conversation_ids, m.pointee.conversation_ids) = arena.cStrings(conversations)
        m.pointee.state = arena.binary(state)
        m.pointee.remaining = UInt32(clamping: remaining)
        return m
    }
}
