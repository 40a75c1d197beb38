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

/// A conversation's unread badge for the viewer.
struct UnreadView: Encodable, Equatable, Sendable {
    var conversation: String
    /// Messages from others the viewer has not read.
    var unread: Int
    /// Of those, the ones that mention the viewer (by name or `@everyone`).
    var mentions: Int
    /// The viewer flagged the conversation unread ("Mark unread").
    var markedUnread: Bool
}

/// A thread's badge for the viewer, from their read state in it.
struct ThreadView: Encodable, Equatable, Sendable {
    var conversation: String
    /// The thread's root message.
    var thread: String
    /// Replies from others the viewer has not read.
    var unread: Int
    /// Of those, the ones that mention the viewer.
    var mentions: Int
    /// The viewer follows the thread.
    var following: Bool
}

/// One page of the "Read By" sheet: its lines in the sheet's order (readers most recent first,
/// then delivered, then not delivered), each in its list.
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
    /// The cursor of the next page (the `after` of a `readDetail`); left out on the last page.
    var next: String?
}
