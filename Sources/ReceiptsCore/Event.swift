/// Identifies an event so that a re-sent event is recognised as a duplicate.
public struct EventID: Hashable, Sendable {
    /// The gateway (or gateway instance) that produced the event.
    public var source: String
    /// Per-source sequence, starting at 1.
    public var sequence: UInt64

    public init(source: String, sequence: UInt64) {
        self.source = source
        self.sequence = sequence
    }
}

/// Whether a conversation is a two-member direct chat or a group.
public enum ConversationKind: UInt8, Hashable, Sendable {
    case direct = 1
    case group = 2
}

/// Who a message mentions: named users, everyone in the conversation, or both.
///
/// A mention counts for a recipient of the message (a member when it was sent, not its sender)
/// until their read watermark reaches it (`UnreadCount.unreadMentions`); naming anyone else
/// changes nothing.
public struct Mentions: Hashable, Sendable {
    /// The users named, in any order; a name given twice counts once.
    public var users: [String]
    /// The message mentions every member (`@everyone`, `@channel`).
    public var everyone: Bool

    /// The most users one message may name (more is rejected `INVALID_EVENT`).
    public static let userLimit = 1_000

    /// A message that mentions nobody.
    public static let none = Mentions()

    public init(users: [String] = [], everyone: Bool = false) {
        self.users = users
        self.everyone = everyone
    }
}

/// One event from a gateway, as the engine applies it.
public struct Event: Hashable, Sendable {
    /// Identifies the event for de-duplication.
    public var id: EventID
    /// The client's time of an offline-queued receipt, clamped into [sent, now] when applied.
    public var clientTime: Timestamp?
    /// What happened.
    public var kind: EventKind

    public init(id: EventID, clientTime: Timestamp? = nil, kind: EventKind) {
        self.id = id
        self.clientTime = clientTime
        self.kind = kind
    }
}

/// What an event says happened (SPEC §3).
public enum EventKind: Hashable, Sendable {
    /// Creates a conversation or replaces its member set.
    case conversationUpserted(conversation: String, kind: ConversationKind, members: [String])
    /// A user joined; they receive messages sent from now on.
    case memberJoined(conversation: String, user: String)
    /// A user left; their receipts stay, they can add no new ones.
    case memberLeft(conversation: String, user: String)
    /// A message exists; nobody has it yet. A system message's mentions count for nobody. With
    /// `thread` (the root's message id) it is a reply in that thread: its recipients are the
    /// conversation's, and only reads in the thread cover it.
    case messageSent(
        conversation: String,
        message: String,
        sender: String,
        isSystem: Bool,
        mentions: Mentions = .none,
        thread: String? = nil
    )
    /// The user's device has the message and every earlier one of its timeline: the main one, or
    /// for a reply its thread's. With `thread` and no message: the thread's every reply so far.
    case delivered(conversation: String, user: String, message: String, thread: String? = nil)
    /// The user has seen the message and every earlier one of its timeline (a reply: of its
    /// thread); `message` nil means the whole main timeline, or with `thread` the whole thread.
    case read(conversation: String, user: String, message: String?, thread: String? = nil)
    /// The user follows thread `thread` (its root's message id), or stops following it.
    case threadFollowed(conversation: String, user: String, thread: String, follows: Bool)
    /// Content changed; receipts are preserved.
    case messageEdited(conversation: String, message: String)
    /// Message deleted; receipts are preserved.
    case messageDeleted(conversation: String, message: String)
    /// The account is gone; its receipts stay, flagged.
    case userDeleted(user: String)
    /// The user turned sharing of reads on or off.
    case receiptPrivacy(user: String, shareReads: Bool)
    /// The user turned sharing of their reads in one conversation on or off. A read is shared
    /// only when both this and the user's global setting allow it (so either one can hide it).
    case conversationReceiptPrivacy(conversation: String, user: String, shareReads: Bool)
    /// The user flagged the conversation unread for their own devices.
    case markedUnread(conversation: String, user: String)
    /// A kind this build does not know (e.g. from a newer gateway); always rejected.
    case unknown
    /// A kind this build knows with a field value it cannot take (a conversation kind that is
    /// neither direct nor group); always rejected as invalid, `detail` naming the field.
    case invalid(detail: String)

    /// The conversation the event belongs to, or nil for user-wide events.
    public var conversation: String? {
        switch self {
        case .conversationUpserted(let conversation, _, _), .memberJoined(let conversation, _),
            .memberLeft(let conversation, _), .messageSent(let conversation, _, _, _, _, _),
            .delivered(let conversation, _, _, _), .read(let conversation, _, _, _),
            .threadFollowed(let conversation, _, _, _),
            .messageEdited(let conversation, _), .messageDeleted(let conversation, _),
            .markedUnread(let conversation, _), .conversationReceiptPrivacy(let conversation, _, _):
            return conversation
        case .userDeleted, .receiptPrivacy, .unknown, .invalid:
            return nil
        }
    }
}
