import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsService

/// The pure checks of `GatewayLimits`: which frame is refused, with which code, naming what.
struct GatewayLimitsCheckTests {
    /// Limits of 3 frames in flight, 4 events per batch, 8 bytes per id.
    static let limits = GatewayLimits(maxFramesInFlight: 3, maxBatchEvents: 4, maxIDBytes: 8)

    static func event(_ kind: EventKind, source: String = "gw") -> Event {
        Event(id: EventID(source: source, sequence: 1), kind: kind)
    }

    /// 9 bytes, one over the limit.
    static let long = "123456789"
    /// 8 bytes but 4 characters: the limit counts UTF-8 bytes.
    static let longest = "éééé"

    @Test("Frames in flight: up to the limit pass, at the limit the next one is UNAVAILABLE naming it")
    func framesInFlight() throws {
        for waiting in 0..<3 {
            #expect(Self.limits.check(framesInFlight: waiting) == nil)
        }
        let refusal = try #require(Self.limits.check(framesInFlight: 3))
        #expect(refusal.code == .unavailable)
        #expect(refusal.limit == .framesInFlight)
        #expect(refusal.message.contains("limit of frames in flight per connection is 3"), "\(refusal.message)")
    }

    @Test("Events per batch: the limit passes, one more is FRAME_TOO_LARGE naming count and limit")
    func eventsPerBatch() throws {
        #expect(Self.limits.check(batchOf: 0) == nil)
        #expect(Self.limits.check(batchOf: 4) == nil)
        let refusal = try #require(Self.limits.check(batchOf: 5))
        #expect(refusal.code == .frameTooLarge)
        #expect(refusal.limit == .eventsPerBatch)
        #expect(refusal.message == "batch of 5 events exceeds the limit of 4 events per batch")
    }

    /// A batch's refusal as the worker makes it: decoded with the id limit.
    private static func refusal(_ events: [Event]) -> FrameRefusal? {
        do {
            _ = try EventBatchCodec.decode(EventBatchCodec.encode(events), maxIDBytes: limits.maxIDBytes)
            return nil
        } catch {
            return FrameRefusal(error, decoding: "EventBatch")
        }
    }

    @Test("Every id field of every event kind: 9 bytes are refused naming index, field, length and limit; 8 pass")
    func idLength() throws {
        let event = { (kind: EventKind) in Self.event(kind) }
        let cases: [(String, (String) -> Event)] = [
            ("id.source", { Self.event(.userDeleted(user: "u"), source: $0) }),
            ("conversation_id", { event(.conversationUpserted(conversation: $0, kind: .group, members: ["a"])) }),
            ("member_ids[1]", { event(.conversationUpserted(conversation: "c", kind: .group, members: ["a", $0])) }),
            ("conversation_id", { event(.memberJoined(conversation: $0, user: "u")) }),
            ("user_id", { event(.memberJoined(conversation: "c", user: $0)) }),
            ("user_id", { event(.memberLeft(conversation: "c", user: $0)) }),
            ("conversation_id", { event(.messageSent(conversation: $0, message: "m", sender: "s", isSystem: false)) }),
            ("message_id", { event(.messageSent(conversation: "c", message: $0, sender: "s", isSystem: false)) }),
            ("sender_id", { event(.messageSent(conversation: "c", message: "m", sender: $0, isSystem: false)) }),
            ("conversation_id", { event(.delivered(conversation: $0, user: "u", message: "m")) }),
            ("user_id", { event(.delivered(conversation: "c", user: $0, message: "m")) }),
            ("message_id", { event(.delivered(conversation: "c", user: "u", message: $0)) }),
            ("user_id", { event(.read(conversation: "c", user: $0, message: nil)) }),
            ("message_id", { event(.read(conversation: "c", user: "u", message: $0)) }),
            ("message_id", { event(.messageEdited(conversation: "c", message: $0)) }),
            ("conversation_id", { event(.messageDeleted(conversation: $0, message: "m")) }),
            ("user_id", { event(.userDeleted(user: $0)) }),
            ("user_id", { event(.receiptPrivacy(user: $0, shareReads: false)) }),
            ("conversation_id", { event(.markedUnread(conversation: $0, user: "u")) }),
            ("user_id", { event(.markedUnread(conversation: "c", user: $0)) }),
        ]
        let fine = event(.userDeleted(user: "u"))
        for (field, make) in cases {
            #expect(Self.refusal([fine, make(Self.longest)]) == nil, "\(field)")
            let refusal = try #require(Self.refusal([fine, make(Self.long)]), "\(field)")
            #expect(refusal.code == .invalidArgument)
            #expect(refusal.limit == .idLength)
            #expect(refusal.message == "event 1: \(field) is 9 bytes, over the limit of 8 bytes per id")
        }
    }

    @Test("Query ids: 9 bytes are refused naming the field; 8 pass; queries without ids always pass")
    func queryIDs() throws {
        let viewer = { (user: String) in Viewer(user: user) }
        let cases: [(String, (String) -> Query)] = [
            ("conversation_id", { .messageStatus(conversation: $0, message: "m", viewer: viewer("u")) }),
            ("message_id", { .messageStatus(conversation: "c", message: $0, viewer: viewer("u")) }),
            ("viewer.user_id", { .messageStatus(conversation: "c", message: "m", viewer: viewer($0)) }),
            ("conversation_id", { .readDetail(conversation: $0, message: "m") }),
            ("message_id", { .readDetail(conversation: "c", message: $0) }),
            ("conversation_id", { .lastSent(conversation: $0, viewer: viewer("u")) }),
            ("viewer.user_id", { .lastSent(conversation: "c", viewer: viewer($0)) }),
            ("user_id", { .unreadCounts(user: $0, conversations: ["c"]) }),
            ("conversation_ids[2]", { .unreadCounts(user: "u", conversations: ["a", "b", $0]) }),
            ("conversation_id", { .snapshot(conversation: $0, limit: 10) }),
        ]
        for (field, make) in cases {
            #expect(Self.limits.check(make(Self.longest)) == nil, "\(field)")
            let refusal = try #require(Self.limits.check(make(Self.long)), "\(field)")
            #expect(refusal.code == .invalidArgument)
            #expect(refusal.limit == .idLength)
            #expect(refusal.message == "query: \(field) is 9 bytes, over the limit of 8 bytes per id")
        }
        for query in [Query.health, .stats, .compact] {
            #expect(Self.limits.check(query) == nil)
        }
    }

    @Test("The configuration refuses limits of 0 and beyond their ranges, and takes its defaults")
    func validation() throws {
        try ServiceConfiguration().validate()
        let bad: [(WritableKeyPath<ServiceConfiguration, Int>, Int, String)] = [
            (\.maxFramesInFlight, 0, "max frames in flight"),
            (\.maxFramesInFlight, ReceiptPipeline.maxAwaiting + 1, "max frames in flight"),
            (\.maxBatchEvents, 0, "max batch events"),
            (\.maxBatchEvents, 1_000_001, "max batch events"),
            (\.maxIDBytes, 0, "max id bytes"),
            (\.maxIDBytes, -1, "max id bytes"),
        ]
        for (setting, value, name) in bad {
            var configuration = ServiceConfiguration()
            configuration[keyPath: setting] = value
            let error = try #require(throws: ServiceError.self) { try configuration.validate() }
            #expect(error.code == .configuration)
            #expect(error.message.hasPrefix(name) && error.message.hasSuffix("got \(value)"), "\(error.message)")
        }
    }
}
