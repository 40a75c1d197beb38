import ArgumentParser
import ReceiptsCore

/// The kinds of event receiptctl can send, by their command-line names.
enum EventKindName: String, CaseIterable, Codable, ExpressibleByArgument {
    case conversation, join, leave, message, delivered, read, edit, delete
    case userDeleted = "user-deleted"
    case privacy
    case markUnread = "mark-unread"
    case follow, unfollow
}

/// One event as written on the command line or as a JSON line on stdin, e.g.
/// `{"kind":"read","conversation":"c1","user":"bob","message":"m1"}`.
struct EventSpec: Codable {
    var kind: EventKindName
    var source: String?
    var sequence: UInt64?
    var conversation: String?
    var conversationKind: String?
    var members: [String]?
    var message: String?
    var sender: String?
    var user: String?
    var system: Bool?
    /// Users a message mentions.
    var mentions: [String]?
    /// The message mentions everyone.
    var mentionsEveryone: Bool?
    /// The thread (its root message) a message replies in, a receipt is given in, or a
    /// follow names.
    var thread: String?
    var shareReads: Bool?
    var clientTimeMs: Int64?

    /// The engine event this spec describes.
    /// - Throws: `CtlError` naming the missing field.
    func event(source defaultSource: String, sequence defaultSequence: UInt64) throws -> Event {
        let id = EventID(source: source ?? defaultSource, sequence: sequence ?? defaultSequence)
        let clientTime = clientTimeMs.map { Timestamp(milliseconds: $0) }
        return Event(id: id, clientTime: clientTime, kind: try eventKind())
    }

    private func eventKind() throws -> EventKind {
        switch kind {
        case .conversation:
            let conversationKind: ConversationKind
            switch self.conversationKind ?? "group" {
            case "direct": conversationKind = .direct
            case "group": conversationKind = .group
            case let other: throw CtlError("conversation kind must be direct or group, got \(other)")
            }
            return .conversationUpserted(
                conversation: try required(conversation, "conversation"),
                kind: conversationKind,
                members: members ?? []
            )
        case .join:
            return .memberJoined(
                conversation: try required(conversation, "conversation"),
                user: try required(user, "user")
            )
        case .leave:
            return .memberLeft(
                conversation: try required(conversation, "conversation"),
                user: try required(user, "user")
            )
        case .message:
            return .messageSent(
                conversation: try required(conversation, "conversation"),
                message: try required(message, "message"),
                sender: try required(sender, "sender"),
                isSystem: system ?? false,
                mentions: Mentions(users: mentions ?? [], everyone: mentionsEveryone ?? false),
                thread: thread
            )
        case .delivered:
            return .delivered(
                conversation: try required(conversation, "conversation"),
                user: try required(user, "user"),
                message: thread == nil ? try required(message, "message") : message ?? "",
                thread: thread
            )
        case .read:
            return .read(
                conversation: try required(conversation, "conversation"),
                user: try required(user, "user"),
                message: message,
                thread: thread
            )
        case .edit:
            return .messageEdited(
                conversation: try required(conversation, "conversation"),
                message: try required(message, "message")
            )
        case .delete:
            return .messageDeleted(
                conversation: try required(conversation, "conversation"),
                message: try required(message, "message")
            )
        case .userDeleted:
            return .userDeleted(user: try required(user, "user"))
        case .privacy:
            return .receiptPrivacy(
                user: try required(user, "user"),
                shareReads: try required(shareReads, "share-reads")
            )
        case .markUnread:
            return .markedUnread(
                conversation: try required(conversation, "conversation"),
                user: try required(user, "user")
            )
        case .follow, .unfollow:
            return .threadFollowed(
                conversation: try required(conversation, "conversation"),
                user: try required(user, "user"),
                thread: try required(thread, "thread"),
                follows: kind == .follow
            )
        }
    }

    private func required<T>(_ value: T?, _ name: String) throws -> T {
        guard let value else { throw CtlError("\(kind.rawValue) events need --\(name)") }
        return value
    }
}
