import Foundation

/// The demo chat's own data, in memory: users, conversations and message texts. receiptd keeps
/// the receipts only, so this is what a real chat backend's database would hold.
struct ChatBackend: Sendable {
    /// A demo user.
    struct User: Sendable, Codable {
        var id: String
        var name: String
        var deleted = false
    }

    /// A conversation: direct (two members) or group.
    struct Conversation: Sendable, Codable {
        var id: String
        var title: String
        var isGroup: Bool
        var members: [String]
    }

    /// A message's text and who sent it when.
    struct Message: Sendable, Codable {
        var id: String
        var conversation: String
        var sender: String
        var text: String
        var isSystem: Bool
        /// Milliseconds since the epoch, the gateway's clock.
        var sentAt: Int64
        /// For a reply in a thread: the thread's root message.
        var thread: String?
    }

    var users: [User]
    var conversations: [Conversation]
    var messages: [Message] = []
    /// Whether each user shares their reads ("Send read receipts").
    var sharesReads: [String: Bool] = [:]
    /// The conversations in which each user shares no reads (the conversation's own switch).
    var privateConversations: [String: Set<String>] = [:]
    private var nextMessage = 1

    /// Guests of "Town Hall": more recipients than one page of its "Read By" sheet shows.
    static let guestCount = 24

    /// Alice, Bob, Carol, Dave and Erin; a direct chat of Alice and Bob, and groups of all five
    /// ("Team"), of Alice, Bob and Carol ("Trio", seed 003's three), of Alice to Dave
    /// ("Book Club", seed 000's sender and three recipients), and of Alice and ``guestCount``
    /// guests, `guest01`, `guest02`, ... ("Town Hall", whose sheet takes pages).
    static func demo() -> ChatBackend {
        let names = ["alice": "Alice", "bob": "Bob", "carol": "Carol", "dave": "Dave", "erin": "Erin"]
        let ids = ["alice", "bob", "carol", "dave", "erin"]
        let guests = (1...guestCount).map { number in
            let digits = number < 10 ? "0\(number)" : "\(number)"
            return User(id: "guest\(digits)", name: "Guest \(digits)")
        }
        return ChatBackend(
            users: ids.map { User(id: $0, name: names[$0]!) } + guests,
            conversations: [
                Conversation(id: "dm-alice-bob", title: "", isGroup: false, members: ["alice", "bob"]),
                Conversation(id: "team", title: "Team", isGroup: true, members: ids),
                Conversation(id: "trio", title: "Trio", isGroup: true, members: ["alice", "bob", "carol"]),
                Conversation(
                    id: "club",
                    title: "Book Club",
                    isGroup: true,
                    members: ["alice", "bob", "carol", "dave"]
                ),
                Conversation(
                    id: "townhall",
                    title: "Town Hall",
                    isGroup: true,
                    members: ["alice"] + guests.map(\.id)
                ),
            ]
        )
    }

    func user(_ id: String) -> User? {
        users.first { $0.id == id }
    }

    func conversation(_ id: String) -> Conversation? {
        conversations.first { $0.id == id }
    }

    /// The conversations a user belongs to.
    func conversations(of user: String) -> [Conversation] {
        conversations.filter { $0.members.contains(user) }
    }

    func message(_ id: String) -> Message? {
        messages.first { $0.id == id }
    }

    /// Stores a new message and returns it.
    mutating func append(
        conversation: String,
        sender: String,
        text: String,
        isSystem: Bool,
        thread: String? = nil
    ) -> Message {
        let message = Message(
            id: "m\(nextMessage)",
            conversation: conversation,
            sender: sender,
            text: text,
            isSystem: isSystem,
            sentAt: Int64(Date().timeIntervalSince1970 * 1000),
            thread: thread
        )
        nextMessage += 1
        messages.append(message)
        return message
    }

    mutating func markDeleted(_ user: String) {
        guard let index = users.firstIndex(where: { $0.id == user }) else { return }
        users[index].deleted = true
    }
}
