/// How far one recipient got with a message.
public enum RecipientState: UInt8, Hashable, Sendable {
    /// Visibly read.
    case read = 1
    /// Delivered, not visibly read.
    case delivered = 2
    /// Not delivered yet.
    case notDelivered = 3
}

/// One recipient's line in the "Read by" sheet.
public struct RecipientReceipt: Hashable, Sendable {
    /// The recipient.
    public var user: String
    /// Read, delivered or not delivered.
    public var state: RecipientState
    /// When they had it delivered.
    public var deliveredAt: Timestamp?
    /// When they read it (nil unless visible).
    public var readAt: Timestamp?
    /// The account is deleted: show "Deleted User".
    public var isUserDeleted: Bool
    /// They left the conversation after the message was sent.
    public var hasLeft: Bool

    public init(
        user: String,
        state: RecipientState,
        deliveredAt: Timestamp?,
        readAt: Timestamp?,
        isUserDeleted: Bool,
        hasLeft: Bool
    ) {
        self.user = user
        self.state = state
        self.deliveredAt = deliveredAt
        self.readAt = readAt
        self.isUserDeleted = isUserDeleted
        self.hasLeft = hasLeft
    }
}

/// The "Read by" sheet of a message, or one page of it; the sender is never listed.
public struct ReadDetail: Hashable, Sendable {
    /// The message's status.
    public var status: MessageStatus
    /// Recipients who read it, most recent read first.
    public var read: [RecipientReceipt]
    /// Recipients who have it delivered, not read.
    public var delivered: [RecipientReceipt]
    /// Recipients who do not have it yet.
    public var notDelivered: [RecipientReceipt]
    /// Paged: the opaque token of where the next page starts (pass it as
    /// `ReadDetailPage.after` for the same message); nil when this page ends the sheet (and when
    /// unpaged).
    public var nextCursor: String?

    public init(
        status: MessageStatus,
        read: [RecipientReceipt],
        delivered: [RecipientReceipt],
        notDelivered: [RecipientReceipt],
        nextCursor: String? = nil
    ) {
        self.status = status
        self.read = read
        self.delivered = delivered
        self.notDelivered = notDelivered
        self.nextCursor = nextCursor
    }
}

/// Which part of a "Read by" sheet to answer.
public struct ReadDetailPage: Hashable, Sendable {
    /// Lines per page (at least 1).
    public var size: Int
    /// The previous page's `nextCursor` for this message; nil for the first page.
    public var after: String?

    public init(size: Int, after: String?) {
        self.size = size
        self.after = after
    }
}

/// One conversation's unread state for a user.
public struct UnreadCount: Hashable, Sendable {
    /// The conversation.
    public var conversation: String
    /// Messages from others after the user's read watermark.
    public var unread: Int
    /// The user flagged the conversation unread.
    public var isMarkedUnread: Bool
    /// The user's read watermark (a message sequence number; 0 = nothing read).
    public var readUpTo: UInt64
    /// The user is no longer a member (left, removed or deleted).
    public var hasLeft: Bool
    /// Of the `unread` messages, those that mention the user, by name or as everyone.
    public var unreadMentions: Int
    /// Threads of the conversation the user follows that have replies they have not read
    /// (thread replies count there, never in `unread`).
    public var unreadThreads: Int

    public init(
        conversation: String,
        unread: Int,
        isMarkedUnread: Bool,
        readUpTo: UInt64,
        hasLeft: Bool = false,
        unreadMentions: Int = 0,
        unreadThreads: Int = 0
    ) {
        self.conversation = conversation
        self.unread = unread
        self.isMarkedUnread = isMarkedUnread
        self.readUpTo = readUpTo
        self.hasLeft = hasLeft
        self.unreadMentions = unreadMentions
        self.unreadThreads = unreadThreads
    }
}

/// A user's read state in one thread (the replies to one root message).
public struct ThreadReadState: Hashable, Sendable {
    /// The conversation.
    public var conversation: String
    /// The thread's root message.
    public var thread: String
    /// Replies from others after the user's read watermark in the thread, of which the user is
    /// a recipient (not system, not deleted).
    public var unread: Int
    /// Of those, the ones that mention the user, by name or as everyone.
    public var unreadMentions: Int
    /// The user's read watermark in the thread (the sequence of the last reply read; 0 = none).
    public var readUpTo: UInt64
    /// The user follows the thread.
    public var isFollowing: Bool
    /// The user is no longer a member of the conversation.
    public var hasLeft: Bool

    public init(
        conversation: String,
        thread: String,
        unread: Int,
        unreadMentions: Int,
        readUpTo: UInt64,
        isFollowing: Bool,
        hasLeft: Bool = false
    ) {
        self.conversation = conversation
        self.thread = thread
        self.unread = unread
        self.unreadMentions = unreadMentions
        self.readUpTo = readUpTo
        self.isFollowing = isFollowing
        self.hasLeft = hasLeft
    }
}

/// A user's own read state in one conversation changed (published on the user's topic).
public struct ReadStateChange: Hashable, Sendable {
    /// The user.
    public var user: String
    /// Their read state in the conversation now.
    public var state: UnreadCount
    /// With a change in a thread: their read state in that thread now (`state` is the
    /// conversation's, whose `unreadThreads` may have changed with it).
    public var thread: ThreadReadState?
    /// When it changed (the event's server time).
    public var time: Timestamp

    public init(user: String, state: UnreadCount, thread: ThreadReadState? = nil, time: Timestamp) {
        self.user = user
        self.state = state
        self.thread = thread
        self.time = time
    }
}

/// A conversation's state, for a subscriber (re)starting to follow it.
public struct ConversationSnapshot: Hashable, Sendable {
    /// The conversation.
    public var conversation: String
    /// Direct or group.
    public var kind: ConversationKind
    /// Current members.
    public var members: [String]
    /// Message statuses in sequence order.
    public var messages: [MessageStatus]

    public init(conversation: String, kind: ConversationKind, members: [String], messages: [MessageStatus]) {
        self.conversation = conversation
        self.kind = kind
        self.members = members
        self.messages = messages
    }
}

/// Who will see a display text: their id, time zone, locale and preferred group style.
public struct Viewer: Hashable, Sendable {
    /// The viewing user; display text is empty unless they sent the message.
    public var user: String
    /// IANA time zone identifier, e.g. "Europe/Paris"; empty = UTC (see `DisplayText.isKnownTimeZone`).
    public var timeZone: String
    /// Locale identifier, e.g. "en_US"; empty = "en_US" (see `DisplayText.isKnownLocale`).
    public var locale: String
    /// Group style: false = "Read by some users", true = "Read by 2 of 5".
    public var prefersCounts: Bool

    public init(user: String, timeZone: String = "", locale: String = "", prefersCounts: Bool = false) {
        self.user = user
        self.timeZone = timeZone
        self.locale = locale
        self.prefersCounts = prefersCounts
    }
}
