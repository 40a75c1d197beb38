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
    /// Paged: where the next page starts; nil when this page ends the sheet (and when unpaged).
    public var nextCursor: ReadDetailCursor?

    public init(
        status: MessageStatus,
        read: [RecipientReceipt],
        delivered: [RecipientReceipt],
        notDelivered: [RecipientReceipt],
        nextCursor: ReadDetailCursor? = nil
    ) {
        self.status = status
        self.read = read
        self.delivered = delivered
        self.notDelivered = notDelivered
        self.nextCursor = nextCursor
    }
}

/// A place in the "Read by" sheet's one order (readers, most recent read first; then
/// delivered; then not delivered; ties by user id): the last line of a page. The next page
/// starts after it, so lines that move meanwhile are neither skipped twice nor shown twice
/// where they stand still.
public struct ReadDetailCursor: Hashable, Sendable, Comparable {
    /// The list of the line.
    public var state: RecipientState
    /// Its read time in milliseconds (read lines; 0 for the others).
    public var readAt: Int64
    /// Its user.
    public var user: String

    public init(state: RecipientState, readAt: Int64, user: String) {
        self.state = state
        self.readAt = readAt
        self.user = user
    }

    /// The cursor as the wire's opaque string: `"<state>/<read ms>/<user>"`.
    public var token: String { "\(state.rawValue)/\(readAt)/\(user)" }

    /// A cursor from its token, or nil if the string is not one.
    public init?(token: String) {
        let parts = token.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let raw = UInt8(parts[0]), let state = RecipientState(rawValue: raw),
            let readAt = Int64(parts[1]), !parts[2].isEmpty
        else { return nil }
        self.init(state: state, readAt: readAt, user: String(parts[2]))
    }

    /// The sheet's order: list, then the most recent read first, then user id.
    public static func < (a: ReadDetailCursor, b: ReadDetailCursor) -> Bool {
        (a.state.rawValue, b.readAt, a.user) < (b.state.rawValue, a.readAt, b.user)
    }
}

/// Which part of a "Read by" sheet to answer.
public struct ReadDetailPage: Hashable, Sendable {
    /// Lines per page (at least 1).
    public var size: Int
    /// The last line of the previous page; nil for the first page.
    public var after: ReadDetailCursor?

    public init(size: Int, after: ReadDetailCursor?) {
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

    public init(conversation: String, unread: Int, isMarkedUnread: Bool, readUpTo: UInt64, hasLeft: Bool = false) {
        self.conversation = conversation
        self.unread = unread
        self.isMarkedUnread = isMarkedUnread
        self.readUpTo = readUpTo
        self.hasLeft = hasLeft
    }
}

/// A user's own read state in one conversation changed (published on the user's topic).
public struct ReadStateChange: Hashable, Sendable {
    /// The user.
    public var user: String
    /// Their read state in the conversation now.
    public var state: UnreadCount
    /// When it changed (the event's server time).
    public var time: Timestamp

    public init(user: String, state: UnreadCount, time: Timestamp) {
        self.user = user
        self.state = state
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
