import ReceiptsCore
import ReceiptsWire

/// Random values of every type the codec carries, within what the wire can represent
/// (no NUL in strings, counts within `uint32`, absent times as nil rather than 0).
extension SeededGenerator {
    private static let alphabet: [String] = [
        "a", "b", "z", "0", "9", "-", "_", ":", " ", "é", "ß", "ж", "中", "文", "🙂", "👩‍👩‍👧", "e\u{301}", "\u{7F}", "\u{1}",
    ]

    mutating func string(maxLength: Int = 12) -> String {
        let length = Int.random(in: 0...maxLength, using: &self)
        return (0..<length).map { _ in Self.alphabet.randomElement(using: &self)! }.joined()
    }

    mutating func nonEmptyString() -> String {
        "x" + string()
    }

    mutating func strings(max: Int = 5) -> [String] {
        (0..<Int.random(in: 0...max, using: &self)).map { _ in string() }
    }

    mutating func bool() -> Bool {
        Bool.random(using: &self)
    }

    mutating func uint64() -> UInt64 {
        // Mix small and full-width values: both sides of every varint length boundary.
        bool() ? UInt64.random(in: 0...300, using: &self) : next()
    }

    mutating func count() -> Int {
        bool() ? Int.random(in: 0...300, using: &self) : Int(UInt32.random(in: 0...UInt32.max, using: &self))
    }

    mutating func timestamp() -> Timestamp {
        var milliseconds: Int64 = 0
        while milliseconds == 0 {
            milliseconds = bool() ? Int64.random(in: 1...2_000_000_000_000, using: &self) : Int64(bitPattern: next())
        }
        return Timestamp(milliseconds: milliseconds)
    }

    mutating func optionalTimestamp() -> Timestamp? {
        bool() ? timestamp() : nil
    }

    mutating func eventKind() -> EventKind {
        switch Int.random(in: 0...12, using: &self) {
        case 0: .conversationUpserted(conversation: string(), kind: bool() ? .direct : .group, members: strings())
        case 1: .memberJoined(conversation: string(), user: string())
        case 2: .memberLeft(conversation: string(), user: string())
        case 3:
            .messageSent(
                conversation: string(),
                message: string(),
                sender: string(),
                isSystem: bool(),
                mentions: Mentions(users: strings(), everyone: bool()),
                thread: bool() ? nonEmptyString() : nil
            )
        case 4:
            .delivered(
                conversation: string(),
                user: string(),
                message: string(),
                thread: bool() ? nonEmptyString() : nil
            )
        case 5:
            .read(
                conversation: string(),
                user: string(),
                message: bool() ? nonEmptyString() : nil,
                thread: bool() ? nonEmptyString() : nil
            )
        case 6: .messageEdited(conversation: string(), message: string())
        case 7: .messageDeleted(conversation: string(), message: string())
        case 8: .userDeleted(user: string())
        case 9: .receiptPrivacy(user: string(), shareReads: bool())
        case 10: .markedUnread(conversation: string(), user: string())
        // An empty conversation id is the global setting on the wire.
        case 11: .conversationReceiptPrivacy(conversation: nonEmptyString(), user: string(), shareReads: bool())
        default: .unknown
        }
    }

    mutating func event() -> Event {
        Event(id: EventID(source: string(), sequence: uint64()), clientTime: optionalTimestamp(), kind: eventKind())
    }

    mutating func receiptStatus() -> ReceiptStatus {
        [.none, .notDelivered, .delivered, .readBySome, .read, .readByAll].randomElement(using: &self)!
    }

    mutating func messageStatus() -> MessageStatus {
        MessageStatus(
            conversation: string(),
            message: string(),
            sequence: uint64(),
            sender: string(),
            sentAt: Timestamp(milliseconds: Int64(bitPattern: next())),
            status: receiptStatus(),
            recipientCount: count(),
            deliveredCount: count(),
            readCount: count(),
            deliveredAt: optionalTimestamp(),
            readAt: optionalTimestamp(),
            isSystem: bool(),
            isEdited: bool(),
            isDeleted: bool()
        )
    }

    mutating func recipientReceipt() -> RecipientReceipt {
        RecipientReceipt(
            user: string(),
            state: [.read, .delivered, .notDelivered].randomElement(using: &self)!,
            deliveredAt: optionalTimestamp(),
            readAt: optionalTimestamp(),
            isUserDeleted: bool(),
            hasLeft: bool()
        )
    }

    mutating func recipientReceipts() -> [RecipientReceipt] {
        (0..<Int.random(in: 0...4, using: &self)).map { _ in recipientReceipt() }
    }

    mutating func viewer() -> Viewer {
        Viewer(user: string(), timeZone: string(), locale: string(), prefersCounts: bool())
    }

    mutating func rejection() -> Rejection {
        let reason = RejectReason.allCases.randomElement(using: &self)!
        return Rejection(reason, string(maxLength: 40), ownerWorker: reason == .notOwner ? count() : nil)
    }

    mutating func outcome() -> EventOutcome {
        switch Int.random(in: 0...2, using: &self) {
        case 0: .accepted(held: bool())
        case 1: .duplicate
        default: .rejected(rejection())
        }
    }

    static let errorCodes: [ErrorReply.Code] = [
        .malformedFrame, .unknownKind, .frameTooLarge, .wrongFrameCount, .notFound, .notOwner, .unavailable,
        .invalidArgument, .internal,
    ]

    mutating func errorReply() -> ErrorReply {
        let code = Self.errorCodes.randomElement(using: &self)!
        return ErrorReply(code: code, message: string(maxLength: 40), ownerWorker: code == .notOwner ? count() : nil)
    }

    mutating func query() -> Query {
        switch Int.random(in: 0...7, using: &self) {
        case 0: .messageStatus(conversation: string(), message: string(), viewer: viewer())
        case 1: .readDetail(conversation: string(), message: string())
        case 2: .lastSent(conversation: string(), viewer: viewer())
        case 3: .unreadCounts(user: string(), conversations: strings())
        case 4: .snapshot(conversation: string(), limit: count())
        case 5: .health
        case 6: .stats
        default: .compact
        }
    }

    mutating func queryReply() -> QueryReply {
        switch Int.random(in: 0...8, using: &self) {
        case 0:
            return .messageStatus(messageStatus(), displayText: string())
        case 1:
            return .readDetail(
                ReadDetail(
                    status: messageStatus(),
                    read: recipientReceipts(),
                    delivered: recipientReceipts(),
                    notDelivered: recipientReceipts()
                )
            )
        case 2:
            return .lastSent(messageStatus(), displayText: string())
        case 3:
            return .unreadCounts(
                (0..<Int.random(in: 0...4, using: &self)).map { _ in
                    UnreadCount(conversation: string(), unread: count(), isMarkedUnread: bool(), readUpTo: uint64())
                }
            )
        case 4:
            let snapshot = ConversationSnapshot(
                conversation: string(),
                kind: bool() ? .direct : .group,
                members: strings(),
                messages: (0..<Int.random(in: 0...3, using: &self)).map { _ in messageStatus() }
            )
            return .snapshot(snapshot, publisherRun: uint64(), sequence: uint64())
        case 5:
            return .health(
                Health(
                    state: string(),
                    workerIndex: count(),
                    workerCount: count(),
                    uptimeMilliseconds: uint64(),
                    publisherRun: uint64()
                )
            )
        case 6:
            return .stats(
                (0..<Int.random(in: 0...4, using: &self)).map { _ in
                    Counter(name: string(), label: string(), value: uint64())
                }
            )
        case 7:
            return .compact(CompactResult(snapshotBytes: uint64(), segmentsRemoved: count(), messagesExpired: uint64()))
        default:
            return .error(errorReply())
        }
    }
}
