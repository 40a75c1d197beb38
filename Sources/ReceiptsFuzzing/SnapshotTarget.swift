import ReceiptsCore

/// The snapshot decoder, and the engine it restores.
///
/// The first input byte picks the framing: even seals the rest with a valid header and
/// checksum (so that the decoder's checks behind the checksum are reached), odd passes the
/// rest as it is.
enum SnapshotTarget {
    static let configuration = EngineConfiguration()
    /// Server time for the events applied to a restored engine.
    static let now = Timestamp(milliseconds: 2_000_000_000_000)

    static func run(_ input: [UInt8]) throws(InvariantViolation) {
        guard let framing = input.first else { return }
        let body = input.dropFirst()
        let bytes = framing & 1 == 0 ? ReceiptEngine.sealedSnapshot(body: body) : Array(body)
        guard var engine = try? ReceiptEngine(restoringFrom: bytes, configuration: configuration) else { return }
        try engine.requireSnapshotRoundTrip("a restored snapshot", configuration: configuration)

        let (conversations, users) = engine.heldIDs
        let someConversations = conversations.prefix(4)
        let someUsers = users.prefix(4)
        for conversation in someConversations {
            _ = engine.kind(of: conversation)
            for message in engine.snapshot(conversation: conversation, limit: 8)?.messages ?? [] {
                _ = engine.readDetail(conversation: conversation, message: message.message)
            }
        }
        for user in someUsers { _ = engine.unreadCounts(user: user, conversations: []) }

        var sequence: UInt64 = 0
        func apply(_ kind: EventKind, clientTime: Timestamp? = nil) {
            sequence += 1
            _ = engine.apply(
                Event(id: EventID(source: "fuzz", sequence: sequence), clientTime: clientTime, kind: kind),
                at: now
            )
        }
        for conversation in someConversations {
            for user in someUsers {
                let message = "fuzz-\(sequence)"
                apply(.messageSent(conversation: conversation, message: message, sender: user, isSystem: false))
                for reader in someUsers {
                    apply(
                        .delivered(conversation: conversation, user: reader, message: message),
                        clientTime: Timestamp(milliseconds: 0)
                    )
                    apply(.read(conversation: conversation, user: reader, message: nil))
                }
            }
            if let user = someUsers.last { apply(.memberLeft(conversation: conversation, user: user)) }
        }
        _ = engine.expireMessages(sentBefore: Timestamp(milliseconds: .max))
        for conversation in someConversations {
            for user in someUsers {
                apply(
                    .messageSent(
                        conversation: conversation,
                        message: "after-expiry-\(sequence)",
                        sender: user,
                        isSystem: false
                    )
                )
            }
        }
        try engine.requireSnapshotRoundTrip("a restored snapshot after events and expiry", configuration: configuration)
    }
}
