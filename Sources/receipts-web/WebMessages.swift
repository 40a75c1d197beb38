/// What a browser sends over the WebSocket, one JSON object per text frame; `type` says which
/// fields matter.
struct Incoming: Decodable, Sendable {
    /// `hello`, `send`, `delivered`, `read`, `privacy`, `markUnread`, `readDetail`, `deleteAccount`.
    var type: String
    var user: String?
    var timeZone: String?
    var locale: String?
    var prefersCounts: Bool?
    var conversation: String?
    var message: String?
    var text: String?
    /// For a read queued while offline: when it happened on the device (ms since the epoch).
    var clientTime: Int64?
    var shareReads: Bool?
    /// Echoed back with the answer to `readDetail`.
    var request: Int?
}

/// What the gateway pushes to a browser; `type` is `init`, `message`, `status`, `unread`,
/// `readDetail`, `privacy` or `error`.
struct Outgoing: Encodable, Sendable {
    var type: String
    var me: String?
    var users: [ChatBackend.User]?
    var conversations: [ChatBackend.Conversation]?
    var messages: [ChatBackend.Message]?
    var message: ChatBackend.Message?
    var statuses: [StatusView]?
    var status: StatusView?
    var unread: [UnreadView]?
    var detail: DetailView?
    var shareReads: Bool?
    var error: String?
    var request: Int?

    init(type: String) {
        self.type = type
    }
}

/// A message's receipt status as the page shows it.
struct StatusView: Encodable, Sendable {
    var conversation: String
    var message: String
    /// `none`, `notDelivered`, `delivered`, `readBySome`, `read`, `readByAll`.
    var status: String
    var recipientCount: Int
    var deliveredCount: Int
    var readCount: Int
    var readAt: Int64?
    /// The text under the message for this viewer (empty unless they sent it), from
    /// ReceiptsCore's `DisplayText` in the browser's time zone and locale.
    var text: String
}

/// A conversation's unread state for the viewer.
struct UnreadView: Encodable, Sendable {
    var conversation: String
    var unread: Int
    var markedUnread: Bool
}

/// The "Read By" sheet.
struct DetailView: Encodable, Sendable {
    /// One recipient's line.
    struct Row: Encodable, Sendable {
        var user: String
        var name: String
        var deleted: Bool
        var readAt: Int64?
        var deliveredAt: Int64?
    }

    var conversation: String
    var message: String
    var read: [Row]
    var delivered: [Row]
    var notDelivered: [Row]
}
