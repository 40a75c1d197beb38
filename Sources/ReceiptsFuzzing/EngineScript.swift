import ReceiptsCore

/// Turns fuzz input into engine steps over a small world: a group `g` (A, B, C, D) and a direct
/// conversation `d` (A, B), users A to E, eight message ids. E never shares reads, so every
/// view of E's reads must look like a delivery.
struct EngineScript {
    static let users = ["A", "B", "C", "D", "E"]
    static let conversations = ["g", "d"]
    static let messages = (0..<8).map { "m\($0)" }
    /// The user whose reads are private.
    static let privateReader = "E"

    /// The events every script starts from, at `start`.
    static let setup: [EventKind] = [
        .conversationUpserted(conversation: "g", kind: .group, members: ["A", "B", "C", "D"]),
        .conversationUpserted(conversation: "d", kind: .direct, members: ["A", "B"]),
        .receiptPrivacy(user: privateReader, shareReads: false),
    ]
    static let start: Int64 = 1_000_000

    /// One step of a script.
    enum Step {
        /// A fresh event (`clientTimeOffset` ms before now, if any) after advancing the clock.
        case event(EventKind, clientTimeOffset: Int64?, advance: Int64)
        /// The event of an earlier step again, same id: a gateway's retry.
        case resend(stepsBack: Int)
        /// Retention: messages sent more than `age` ms ago go.
        case expire(age: Int64)
    }

    /// The steps of `input`, two bytes each.
    static func steps(_ input: [UInt8]) -> [Step] {
        stride(from: 0, to: input.count - 1, by: 2).map { step(input[$0], input[$0 + 1]) }
    }

    /// Byte `a` picks the kind (low four bits), the conversation (bit 4), the clock advance
    /// (bits 5 and 6) and whether there is a client time (bit 7). Byte `b` picks the user (high
    /// five bits) and the message (low three), and also the client time's distance, a system
    /// message, the mentions, a reply's thread, a read of a thread, a thread follow, a sharing
    /// value or an account deletion, a member list, an expiry age or how far back a re-send
    /// reaches, as the kind needs.
    static func step(_ a: UInt8, _ b: UInt8) -> Step {
        let conversation = conversations[Int(a >> 4 & 1)]
        let user = users[Int(b >> 3) % users.count]
        let message = messages[Int(b & 7)]
        let advance: Int64 = [0, 1, 1_000, 90_000][Int(a >> 5 & 3)]
        let clientTimeOffset: Int64? = a & 0x80 == 0 ? nil : Int64(b) * 500
        let kind: EventKind
        switch a & 15 {
        case 0, 1, 2:
            // Kind 1 mentions two users picked by `b` (the sender, a non-member or one twice
            // among them), and everyone when bit 7 of `b` is set.
            kind = .messageSent(
                conversation: conversation,
                message: message,
                sender: user,
                isSystem: a & 15 == 2 && b >= 128,
                mentions: a & 15 != 1
                    ? .none
                    : Mentions(
                        users: [users[Int(b) % users.count], users[Int(b >> 2) % users.count]],
                        everyone: b >= 128
                    ),
                // Kind 2 replies in the thread of the message after this one's id.
                thread: a & 15 == 2 ? messages[(Int(b) + 1) & 7] : nil
            )
        case 3, 4: kind = .delivered(conversation: conversation, user: user, message: message)
        case 5, 6:
            // Kind 6 reads everything: the main timeline, or with bit 7 of `b` the thread of `message`.
            kind = .read(
                conversation: conversation,
                user: user,
                message: a & 15 == 6 ? nil : message,
                thread: a & 15 == 6 && b >= 128 ? message : nil
            )
        case 7: kind = .memberJoined(conversation: conversation, user: user)
        case 8: kind = .memberLeft(conversation: conversation, user: user)
        case 9:
            kind =
                b & 1 == 0
                ? .messageEdited(conversation: conversation, message: message)
                : .messageDeleted(conversation: conversation, message: message)
        case 10:
            kind =
                b & 0x60 == 0x60
                ? .threadFollowed(conversation: conversation, user: user, thread: message, follows: b & 0x80 == 0)
                : .markedUnread(conversation: conversation, user: user)
        case 11:
            // Sharing changes of everyone but the private reader; rarely, an account deletion.
            guard user != privateReader else { return .expire(age: Int64(b) * 1_000) }
            kind = b & 0x44 != 0x44 ? .receiptPrivacy(user: user, shareReads: b & 2 == 0) : .userDeleted(user: user)
        case 12:
            kind = .conversationUpserted(
                conversation: conversation,
                kind: a >> 4 & 1 == 0 ? .group : .direct,
                members: Array(users.prefix(Int(b) % 5 + 1))
            )
        default: return .resend(stepsBack: Int(b) % 16 + 1)
        }
        return .event(kind, clientTimeOffset: clientTimeOffset, advance: advance)
    }
}
