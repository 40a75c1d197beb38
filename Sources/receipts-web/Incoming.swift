/// What a browser sends over the WebSocket: one JSON object per text frame, whose `type` names
/// the command and whose other keys are its fields.
///
/// A field the page may leave out decodes to the value the gateway has always assumed for it;
/// a field a command cannot do without is required, so the gateway never sees it absent.
enum Incoming: Sendable {
    /// The wire name of each command, its `type`.
    enum Kind: String, Sendable {
        case hello, send, delivered, read, privacy, markUnread, readDetail, deleteAccount
    }

    /// Who the tab is: its user, IANA time zone, BCP 47 locale and group style ("" and `false`
    /// when left out).
    case hello(user: String, timeZone: String, locale: String, prefersCounts: Bool)
    /// A new message in a conversation ("" when the text is left out, which is refused); with
    /// `thread`, a reply in the thread of that root message.
    case send(conversation: String, text: String, thread: String?)
    /// A message from someone else reached this browser.
    case delivered(conversation: String, message: String)
    /// The user saw a conversation up to a message (with `thread`, a thread up to one of its
    /// replies); `clientTime` is when, on the device, for a read queued while offline (ms since
    /// the epoch), and `nil` for a read made now.
    case read(conversation: String, message: String, clientTime: Int64?, thread: String?)
    /// The "Send read receipts" switch: the user's own (no conversation) or one conversation's;
    /// sharing when `shareReads` is left out.
    case privacy(shareReads: Bool, conversation: String?)
    /// "Mark as unread" on a conversation.
    case markUnread(conversation: String)
    /// A page of the "Read By" sheet of one of the user's messages: `size` lines (the gateway's
    /// page size when left out) after the cursor `after` (a `next` of an earlier page; from the
    /// top when left out); `request` is echoed with the answer.
    case readDetail(conversation: String, message: String, after: String?, size: Int?, request: Int?)
    /// The user deletes their account.
    case deleteAccount

    /// The command's wire name, for error texts and logs.
    var kind: Kind {
        switch self {
        case .hello: .hello
        case .send: .send
        case .delivered: .delivered
        case .read: .read
        case .privacy: .privacy
        case .markUnread: .markUnread
        case .readDetail: .readDetail
        case .deleteAccount: .deleteAccount
        }
    }
}

extension Incoming: Decodable {
    /// Every key any command has.
    private enum Field: String, CodingKey {
        case type, user, timeZone, locale, prefersCounts, conversation, message, text, clientTime, shareReads, request
        case after, size, thread
    }

    /// Decodes a frame, keyed on its `type`.
    /// - Throws: `IncomingError` for an unknown `type` or a required field left out (or `null`);
    ///   `DecodingError` when the frame is no JSON object, has no `type`, or a field has the wrong
    ///   type.
    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: Field.self)
        let type = try fields.decode(String.self, forKey: .type)
        guard let kind = Kind(rawValue: type) else { throw IncomingError.unknownCommand(type) }
        func required(_ field: Field) throws -> String {
            guard let value = try fields.decodeIfPresent(String.self, forKey: field) else {
                throw IncomingError.missingField(field.stringValue, of: kind)
            }
            return value
        }
        switch kind {
        case .hello:
            self = .hello(
                user: try required(.user),
                timeZone: try fields.decodeIfPresent(String.self, forKey: .timeZone) ?? "",
                locale: try fields.decodeIfPresent(String.self, forKey: .locale) ?? "",
                prefersCounts: try fields.decodeIfPresent(Bool.self, forKey: .prefersCounts) ?? false
            )
        case .send:
            self = .send(
                conversation: try required(.conversation),
                text: try fields.decodeIfPresent(String.self, forKey: .text) ?? "",
                thread: try fields.decodeIfPresent(String.self, forKey: .thread)
            )
        case .delivered:
            self = .delivered(conversation: try required(.conversation), message: try required(.message))
        case .read:
            self = .read(
                conversation: try required(.conversation),
                message: try required(.message),
                clientTime: try fields.decodeIfPresent(Int64.self, forKey: .clientTime),
                thread: try fields.decodeIfPresent(String.self, forKey: .thread)
            )
        case .privacy:
            self = .privacy(
                shareReads: try fields.decodeIfPresent(Bool.self, forKey: .shareReads) ?? true,
                conversation: try fields.decodeIfPresent(String.self, forKey: .conversation)
            )
        case .markUnread:
            self = .markUnread(conversation: try required(.conversation))
        case .readDetail:
            self = .readDetail(
                conversation: try required(.conversation),
                message: try required(.message),
                after: try fields.decodeIfPresent(String.self, forKey: .after),
                size: try fields.decodeIfPresent(Int.self, forKey: .size),
                request: try fields.decodeIfPresent(Int.self, forKey: .request)
            )
        case .deleteAccount:
            self = .deleteAccount
        }
    }
}

/// A frame that names a command this gateway does not know, or leaves out a field its command
/// needs; its text goes back to the browser.
struct IncomingError: Error, CustomStringConvertible {
    /// What is wrong with the frame.
    enum Code: Sendable {
        case unknownCommand
        case missingField
    }

    let code: Code
    let description: String

    /// A `type` that is none of ``Incoming/Kind``.
    static func unknownCommand(_ type: String) -> IncomingError {
        IncomingError(code: .unknownCommand, description: "unknown command \(type)")
    }

    /// A required `field` of a `kind` command absent or `null`.
    static func missingField(_ field: String, of kind: Incoming.Kind) -> IncomingError {
        IncomingError(code: .missingField, description: "\(kind.rawValue) failed: missing \(field)")
    }
}
