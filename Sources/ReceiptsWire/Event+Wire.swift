import CReceiptsProto
import ReceiptsCore

extension Event {
    /// The event from an unpacked `receipts.v1.Event`. Whatever the engine cannot apply (no
    /// kind, a conversation kind that is neither direct nor group, an empty id) it rejects per
    /// event, so the rest of the batch proceeds; only an id that is not UTF-8 or holds a NUL
    /// refuses the frame.
    /// - Throws: `WireError` `.invalidField` from `strings`, naming the event and the field.
    init(wire event: Receipts__V1__Event, strings: RequestStrings) throws(WireError) {
        let id =
            try event.id.map { (id) throws(WireError) in
                EventID(source: try strings.string(id.pointee.source, "id.source"), sequence: id.pointee.sequence)
            } ?? EventID(source: "", sequence: 0)
        self.init(
            id: id,
            clientTime: Timestamp?(wire: event.client_time_ms),
            kind: try EventKind(wire: event, strings: strings)
        )
    }

    /// Fills `event` (already in `arena`) from this event.
    func build(into event: UnsafeMutablePointer<Receipts__V1__Event>, arena: inout Arena) {
        receipts__v1__event__init(event)
        let eventID = arena.message(receipts__v1__event_id__init)
        eventID.pointee.source = arena.cString(id.source)
        eventID.pointee.sequence = id.sequence
        event.pointee.id = eventID
        event.pointee.client_time_ms = clientTime.wire
        kind.build(into: event, arena: &arena)
    }
}

extension EventKind {
    /// The kind set in the event's oneof. None set (a newer gateway's kind) is `.unknown`; a
    /// conversation kind that is neither direct nor group is `.invalid`, naming the field.
    /// - Throws: `WireError` `.invalidField` from `strings`, naming the event and the field.
    init(wire event: Receipts__V1__Event, strings: RequestStrings) throws(WireError) {
        switch event.kind_case {
        case RECEIPTS__V1__EVENT__KIND_CONVERSATION_UPSERTED:
            guard let m = event.conversation_upserted?.pointee else {
                self = .unknown
                return
            }
            let conversation = try strings.string(m.conversation_id, "conversation_id")
            let members = try strings.strings(m.member_ids, count: m.n_member_ids, "member_ids")
            guard let kind = ConversationKind(wire: m.kind) else {
                self = .invalid(detail: ConversationKind.refusal(of: m.kind))
                return
            }
            self = .conversationUpserted(conversation: conversation, kind: kind, members: members)
        case RECEIPTS__V1__EVENT__KIND_MEMBER_JOINED:
            guard let m = event.member_joined?.pointee else {
                self = .unknown
                return
            }
            self = .memberJoined(
                conversation: try strings.string(m.conversation_id, "conversation_id"),
                user: try strings.string(m.user_id, "user_id")
            )
        case RECEIPTS__V1__EVENT__KIND_MEMBER_LEFT:
            guard let m = event.member_left?.pointee else {
                self = .unknown
                return
            }
            self = .memberLeft(
                conversation: try strings.string(m.conversation_id, "conversation_id"),
                user: try strings.string(m.user_id, "user_id")
            )
        case RECEIPTS__V1__EVENT__KIND_MESSAGE_SENT:
            guard let m = event.message_sent?.pointee else {
                self = .unknown
                return
            }
            self = .messageSent(
                conversation: try strings.string(m.conversation_id, "conversation_id"),
                message: try strings.string(m.message_id, "message_id"),
                sender: try strings.string(m.sender_id, "sender_id"),
                isSystem: m.system != 0,
                mentions: Mentions(
                    users: try strings.strings(
                        m.mentioned_user_ids,
                        count: m.n_mentioned_user_ids,
                        "mentioned_user_ids"
                    ),
                    everyone: m.mentions_everyone != 0
                ),
                thread: try strings.optionalString(m.thread_root_id, "thread_root_id")
            )
        case RECEIPTS__V1__EVENT__KIND_DELIVERED:
            guard let m = event.delivered?.pointee else {
                self = .unknown
                return
            }
            self = .delivered(
                conversation: try strings.string(m.conversation_id, "conversation_id"),
                user: try strings.string(m.user_id, "user_id"),
                message: try strings.string(m.message_id, "message_id"),
                thread: try strings.optionalString(m.thread_root_id, "thread_root_id")
            )
        case RECEIPTS__V1__EVENT__KIND_READ:
            guard let m = event.read?.pointee else {
                self = .unknown
                return
            }
            let conversation = try strings.string(m.conversation_id, "conversation_id")
            let user = try strings.string(m.user_id, "user_id")
            self = .read(
                conversation: conversation,
                user: user,
                message: try strings.string(m.message_id, "message_id").nonEmpty,
                thread: try strings.optionalString(m.thread_root_id, "thread_root_id")
            )
        case RECEIPTS__V1__EVENT__KIND_MESSAGE_EDITED:
            guard let m = event.message_edited?.pointee else {
                self = .unknown
                return
            }
            self = .messageEdited(
                conversation: try strings.string(m.conversation_id, "conversation_id"),
                message: try strings.string(m.message_id, "message_id")
            )
        case RECEIPTS__V1__EVENT__KIND_MESSAGE_DELETED:
            guard let m = event.message_deleted?.pointee else {
                self = .unknown
                return
            }
            self = .messageDeleted(
                conversation: try strings.string(m.conversation_id, "conversation_id"),
                message: try strings.string(m.message_id, "message_id")
            )
        case RECEIPTS__V1__EVENT__KIND_USER_DELETED:
            guard let m = event.user_deleted?.pointee else {
                self = .unknown
                return
            }
            self = .userDeleted(user: try strings.string(m.user_id, "user_id"))
        case RECEIPTS__V1__EVENT__KIND_RECEIPT_PRIVACY:
            guard let m = event.receipt_privacy?.pointee else {
                self = .unknown
                return
            }
            let user = try strings.string(m.user_id, "user_id")
            let conversation = try strings.string(m.conversation_id, "conversation_id")
            self =
                conversation.isEmpty
                ? .receiptPrivacy(user: user, shareReads: m.share_reads != 0)
                : .conversationReceiptPrivacy(conversation: conversation, user: user, shareReads: m.share_reads != 0)
        case RECEIPTS__V1__EVENT__KIND_THREAD_FOLLOWED:
            guard let m = event.thread_followed?.pointee else {
                self = .unknown
                return
            }
            self = .threadFollowed(
                conversation: try strings.string(m.conversation_id, "conversation_id"),
                user: try strings.string(m.user_id, "user_id"),
                thread: try strings.string(m.thread_root_id, "thread_root_id"),
                follows: m.follow != 0
            )
        case RECEIPTS__V1__EVENT__KIND_MARKED_UNREAD:
            guard let m = event.marked_unread?.pointee else {
                self = .unknown
                return
            }
            self = .markedUnread(
                conversation: try strings.string(m.conversation_id, "conversation_id"),
                user: try strings.string(m.user_id, "user_id")
            )
        default:
            self = .unknown
        }
    }

    /// Sets the event's oneof to this kind; `.unknown` and `.invalid` (whose field value the
    /// wire cannot hold either) leave it unset.
    func build(into event: UnsafeMutablePointer<Receipts__V1__Event>, arena: inout Arena) {
        switch self {
        case .conversationUpserted(let conversation, let kind, let members):
            let m = arena.message(receipts__v1__conversation_upserted__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.kind = kind.wire
            (m.pointee.n_member_ids, m.pointee.member_ids) = arena.cStrings(members)
            event.pointee.conversation_upserted = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_CONVERSATION_UPSERTED
        case .memberJoined(let conversation, let user):
            let m = arena.message(receipts__v1__member_joined__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.user_id = arena.cString(user)
            event.pointee.member_joined = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_MEMBER_JOINED
        case .memberLeft(let conversation, let user):
            let m = arena.message(receipts__v1__member_left__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.user_id = arena.cString(user)
            event.pointee.member_left = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_MEMBER_LEFT
        case .messageSent(let conversation, let message, let sender, let isSystem, let mentions, let thread):
            let m = arena.message(receipts__v1__message_sent__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.message_id = arena.cString(message)
            m.pointee.sender_id = arena.cString(sender)
            m.pointee.system = isSystem ? 1 : 0
            (m.pointee.n_mentioned_user_ids, m.pointee.mentioned_user_ids) = arena.cStrings(mentions.users)
            m.pointee.mentions_everyone = mentions.everyone ? 1 : 0
            if let thread { m.pointee.thread_root_id = arena.cString(thread) }
            event.pointee.message_sent = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_MESSAGE_SENT
        case .delivered(let conversation, let user, let message, let thread):
            let m = arena.message(receipts__v1__delivered__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.user_id = arena.cString(user)
            m.pointee.message_id = arena.cString(message)
            if let thread { m.pointee.thread_root_id = arena.cString(thread) }
            event.pointee.delivered = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_DELIVERED
        case .read(let conversation, let user, let message, let thread):
            let m = arena.message(receipts__v1__read__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.user_id = arena.cString(user)
            m.pointee.message_id = arena.cString(message ?? "")
            if let thread { m.pointee.thread_root_id = arena.cString(thread) }
            event.pointee.read = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_READ
        case .messageEdited(let conversation, let message):
            let m = arena.message(receipts__v1__message_edited__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.message_id = arena.cString(message)
            event.pointee.message_edited = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_MESSAGE_EDITED
        case .messageDeleted(let conversation, let message):
            let m = arena.message(receipts__v1__message_deleted__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.message_id = arena.cString(message)
            event.pointee.message_deleted = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_MESSAGE_DELETED
        case .userDeleted(let user):
            let m = arena.message(receipts__v1__user_deleted__init)
            m.pointee.user_id = arena.cString(user)
            event.pointee.user_deleted = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_USER_DELETED
        case .receiptPrivacy(let user, let shareReads):
            let m = arena.message(receipts__v1__receipt_privacy__init)
            m.pointee.user_id = arena.cString(user)
            m.pointee.share_reads = shareReads ? 1 : 0
            event.pointee.receipt_privacy = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_RECEIPT_PRIVACY
        case .conversationReceiptPrivacy(let conversation, let user, let shareReads):
            let m = arena.message(receipts__v1__receipt_privacy__init)
            m.pointee.user_id = arena.cString(user)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.share_reads = shareReads ? 1 : 0
            event.pointee.receipt_privacy = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_RECEIPT_PRIVACY
        case .threadFollowed(let conversation, let user, let thread, let follows):
            let m = arena.message(receipts__v1__thread_followed__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.user_id = arena.cString(user)
            m.pointee.thread_root_id = arena.cString(thread)
            m.pointee.follow = follows ? 1 : 0
            event.pointee.thread_followed = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_THREAD_FOLLOWED
        case .markedUnread(let conversation, let user):
            let m = arena.message(receipts__v1__marked_unread__init)
            m.pointee.conversation_id = arena.cString(conversation)
            m.pointee.user_id = arena.cString(user)
            event.pointee.marked_unread = m
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND_MARKED_UNREAD
        case .unknown, .invalid:
            event.pointee.kind_case = RECEIPTS__V1__EVENT__KIND__NOT_SET
        }
    }
}
