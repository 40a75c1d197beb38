import ReceiptsCore
import ReceiptsTestKit

/// What the simulation's event ids stand for: each id is one receipts event, a pure function of
/// the seed and the id, so that every member and the reference engine apply the same event for
/// it whatever order the network delivered it in.
///
/// Ids 1–3 create three conversations of five users (two groups and a direct chat); every
/// fourth id after them sends a message, which may mention users or everyone and may reply in
/// the thread of an earlier one; the others deliver, read or delete one of the last few messages
/// of a conversation, read or follow its thread, or (in the groups) make a member leave or join. Some are
/// rejected (a user who is not a member, a sender reading their own message), as some of a
/// real gateway's are.
struct SimulatedWorkload {
    static let users = (0..<5).map { "u\($0)" }
    /// The conversations with their kinds and first members.
    static let conversations: [(id: String, kind: ConversationKind, members: [String])] = [
        ("c0", .group, users),
        ("c1", .group, Array(users.prefix(4))),
        ("c2", .direct, ["u1", "u2"]),
    ]

    let seed: UInt64

    /// The event that `id` stands for.
    func event(_ id: UInt64) -> Event {
        Event(id: EventID(source: "sim", sequence: id), kind: kind(id))
    }

    private func kind(_ id: UInt64) -> EventKind {
        var random = SplitMix64(seed: seed ^ (id &* 0xD6E8_FEB8_6659_FD93))
        if id <= UInt64(Self.conversations.count) {
            let conversation = Self.conversations[Int(id - 1)]
            return .conversationUpserted(
                conversation: conversation.id,
                kind: conversation.kind,
                members: conversation.members
            )
        }
        if id % 4 == 0 {
            let conversation = Self.conversations[Int(id / 4) % Self.conversations.count]
            // One in four replies in the thread of the conversation's message before it.
            let step = 4 * UInt64(Self.conversations.count)
            let thread = id >= 4 + step && Int.random(in: 0..<4, using: &random) == 0 ? "m\(id - step)" : nil
            return .messageSent(
                conversation: conversation.id,
                message: "m\(id)",
                sender: conversation.members.randomElement(using: &random)!,
                isSystem: Int.random(in: 0..<20, using: &random) == 0,
                mentions: Mentions(
                    users: Self.users.filter { _ in Int.random(in: 0..<4, using: &random) == 0 },
                    everyone: Int.random(in: 0..<10, using: &random) == 0
                ),
                thread: thread
            )
        }
        // One of the four messages before the newest (gateways send in id order, so it is
        // mostly applied already); its conversation is the event's, and mostly one of its members.
        let back = UInt64.random(in: 1...4, using: &random)
        let sent = 4 * (id / 4 > back ? id / 4 - back : 1)
        let conversation = Self.conversations[Int(sent / 4) % Self.conversations.count]
        let user =
            Int.random(in: 0..<10, using: &random) == 0
            ? Self.users.randomElement(using: &random)! : conversation.members.randomElement(using: &random)!
        switch Int.random(in: 0..<20, using: &random) {
        case 0 where conversation.kind == .group:
            return .memberLeft(conversation: conversation.id, user: user)
        case 1 where conversation.kind == .group:
            return .memberJoined(conversation: conversation.id, user: user)
        case 2:
            return .read(conversation: conversation.id, user: user, message: nil)
        case 11:
            return .messageDeleted(conversation: conversation.id, message: "m\(sent)")
        case 12:
            return .read(conversation: conversation.id, user: user, message: nil, thread: "m\(sent)")
        case 13:
            return .threadFollowed(conversation: conversation.id, user: user, thread: "m\(sent)", follows: true)
        case 3..<11:
            return .read(conversation: conversation.id, user: user, message: "m\(sent)")
        default:
            return .delivered(conversation: conversation.id, user: user, message: "m\(sent)")
        }
    }
}
