/// What the gateway pushes to a browser: one JSON object per text frame, whose `type` names the
/// push and whose other keys are its fields (an absent optional field is left out).
enum Outgoing: Sendable {
    /// `init`, the answer to `hello`: everything the page shows to `me`.
    case initial(
        me: String,
        users: [ChatBackend.User],
        conversations: [ChatBackend.Conversation],
        messages: [ChatBackend.Message],
        statuses: [StatusView],
        shareReads: Bool,
        privateConversations: [String]
    )
    /// A new message in one of the user's conversations.
    case message(ChatBackend.Message)
    /// A message's new receipt status, as this browser's user sees it.
    case status(StatusView)
    /// The unread badges of some of the user's conversations: those that changed (every one
    /// the gateway knows, to a tab that just said `hello`). The others stay as they were.
    case unread([UnreadView])
    /// The user's threads whose badge changed (every one the gateway knows, to a tab that just
    /// said `hello`).
    case threads([ThreadView])
    /// A page of the "Read By" sheet, with the `request` of the `readDetail` it answers.
    case readDetail(DetailView, request: Int?)
    /// The user's "Send read receipts" setting: their own (no conversation) or one conversation's.
    case privacy(shareReads: Bool, conversation: String?)
    /// Every user, after one of them deleted their account.
    case users([ChatBackend.User])
    /// A frame refused or a command that failed.
    case error(String)
}

extension Outgoing: Encodable {
    /// Every key any push has.
    private enum Field: String, CodingKey {
        case type
        case me, users, conversations, messages, statuses, shareReads, privateConversations, conversation
        case message, status, unread, threads, detail, request, error
    }

    /// Encodes the push as the page reads it (`Public/app.js`, `receive`).
    /// - Throws: `EncodingError` if a value cannot be encoded.
    func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: Field.self)
        switch self {
        case .initial(
            let me,
            let users,
            let conversations,
            let messages,
            let statuses,
            let shareReads,
            let privateConversations
        ):
            try fields.encode("init", forKey: .type)
            try fields.encode(me, forKey: .me)
            try fields.encode(users, forKey: .users)
            try fields.encode(conversations, forKey: .conversations)
            try fields.encode(messages, forKey: .messages)
            try fields.encode(statuses, forKey: .statuses)
            try fields.encode(shareReads, forKey: .shareReads)
            try fields.encode(privateConversations, forKey: .privateConversations)
        case .message(let message):
            try fields.encode("message", forKey: .type)
            try fields.encode(message, forKey: .message)
        case .status(let status):
            try fields.encode("status", forKey: .type)
            try fields.encode(status, forKey: .status)
        case .unread(let unread):
            try fields.encode("unread", forKey: .type)
            try fields.encode(unread, forKey: .unread)
        case .threads(let threads):
            try fields.encode("threads", forKey: .type)
            try fields.encode(threads, forKey: .threads)
        case .readDetail(let detail, let request):
            try fields.encode("readDetail", forKey: .type)
            try fields.encode(detail, forKey: .detail)
            try fields.encodeIfPresent(request, forKey: .request)
        case .privacy(let shareReads, let conversation):
            try fields.encode("privacy", forKey: .type)
            try fields.encode(shareReads, forKey: .shareReads)
            try fields.encodeIfPresent(conversation, forKey: .conversation)
        case .users(let users):
            try fields.encode("users", forKey: .type)
            try fields.encode(users, forKey: .users)
        case .error(let error):
            try fields.encode("error", forKey: .type)
            try fields.encode(error, forKey: .error)
        }
    }
}
