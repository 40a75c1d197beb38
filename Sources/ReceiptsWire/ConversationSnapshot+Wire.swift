import CReceiptsProto
import ReceiptsCore

extension ConversationSnapshot {
    /// The snapshot from the wire, with the publisher run and sequence it was taken at.
    /// - Throws: `WireError` `.invalidField` when the conversation kind is UNSPECIFIED or
    ///   unknown: a snapshot must say whether the conversation is direct or a group.
    static func decode(
        wire snapshot: Receipts__V1__ConversationSnapshot
    ) throws(WireError) -> (
        snapshot: ConversationSnapshot, publisherRun: UInt64, sequence: UInt64
    ) {
        guard let kind = ConversationKind(wire: snapshot.kind) else {
            throw WireError(
                code: .invalidField,
                message: "ConversationSnapshot.kind \(snapshot.kind.rawValue) is not known"
            )
        }
        let value = ConversationSnapshot(
            conversation: String(wire: snapshot.conversation_id),
            kind: kind,
            members: String.array(wire: snapshot.member_ids, count: snapshot.n_member_ids),
            messages: [MessageStatus](wire: snapshot.messages, count: snapshot.n_messages) { MessageStatus(wire: $0) }
        )
        return (value, snapshot.epoch, snapshot.sequence)
    }

    func build(
        publisherRun: UInt64,
        sequence: UInt64,
        in arena: inout Arena
    )
        -> UnsafeMutablePointer<Receipts__V1__ConversationSnapshot>
    {
        let snapshot = arena.message(receipts__v1__conversation_snapshot__init)
        snapshot.pointee.conversation_id = arena.cString(conversation)
        snapshot.pointee.kind = kind.wire
        (snapshot.pointee.n_member_ids, snapshot.pointee.member_ids) = arena.cStrings(members)
        snapshot.pointee.epoch = publisherRun
        snapshot.pointee.sequence = sequence
        (snapshot.pointee.n_messages, snapshot.pointee.messages) = arena.messages(messages) {
            $0.build(displayText: "", in: &$1)
        }
        return snapshot
    }
}
