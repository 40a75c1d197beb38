import ReceiptsCore

/// Turns a list of random integers into a sequence of events over a small world (a group and a
/// direct conversation, five users, eight message ids each), so property tests can shrink
/// failing inputs as plain integer arrays.
struct RandomScript {
    static let users = ["A", "B", "C", "D", "E"]
    static let conversations = ["g", "d"]

    /// The setup events every script starts from.
    static let setup: [EventKind] = [
        .conversationUpserted(conversation: "g", kind: .group, members: ["A", "B", "C", "D"]),
        .conversationUpserted(conversation: "d", kind: .direct, members: ["A", "B"]),
    ]

    /// One scripted step: the event, its client time offset (ms before now) and the clock advance.
    struct Step {
        var kind: EventKind
        var clientTimeOffset: Int64?
        var advance: Int64
        /// Re-send the event id of this earlier step instead of a fresh one.
        var resendOf: Int?
    }

    /// Decodes one random integer into a step.
    static func step(_ x: Int, index: Int) -> Step {
        var x = x
        func take(_ n: Int) -> Int {
            defer { x /= n }
            return x % n
        }
        let op = take(16)
        let conversation = conversations[take(4) == 0 ? 1 : 0]
        let user = users[take(users.count)]
        let message = "m\(take(8))"
        let advance = Int64(take(3)) * 1000
        let clientOffset: Int64? = take(4) == 0 ? Int64(take(5_000)) - 1_000 : nil
        let kind: EventKind
        switch op {
        case 0, 1, 2:
            let isSystem = take(8) == 0
            let named = users.indices.filter { _ in take(4) == 0 }.map { users[$0] }
            kind = .messageSent(
                conversation: conversation,
                message: message,
                sender: user,
                isSystem: isSystem,
                mentions: Mentions(users: named, everyone: take(6) == 0),
                thread: take(4) == 0 ? "m\(take(8))" : nil
            )
        case 3, 4: kind = .delivered(conversation: conversation, user: user, message: message)
        case 5, 6: kind = .read(conversation: conversation, user: user, message: message)
        case 7: kind = .read(conversation: conversation, user: user, message: nil, thread: take(3) == 0 ? message : nil)
        case 8: kind = .memberJoined(conversation: "g", user: user)
        case 9: kind = .memberLeft(conversation: "g", user: user)
        case 10: kind = .receiptPrivacy(user: user, shareReads: take(2) == 0)
        case 11:
            switch take(6) {
            case 0: kind = .userDeleted(user: user)
            case 1:
                kind = .threadFollowed(conversation: conversation, user: user, thread: message, follows: take(2) == 0)
            default: kind = .markedUnread(conversation: conversation, user: user)
            }
        case 12:
            kind =
                take(2) == 0
                ? .messageEdited(conversation: conversation, message: message)
                : .messageDeleted(conversation: conversation, message: message)
        default:
            let earlier = index > 0 ? take(index) : 0
            return Step(kind: .unknown, clientTimeOffset: nil, advance: advance, resendOf: index > 0 ? earlier : nil)
        }
        return Step(kind: kind, clientTimeOffset: clientOffset, advance: advance, resendOf: nil)
    }

    /// Every message id that may exist.
    static let messageIDs: [(String, String)] = conversations.flatMap { c in (0..<8).map { (c, "m\($0)") } }
}
