import Foundation
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// Mentions against the real daemon, written and read as a gateway in another language does
/// (issue 31): `MessageSent.mentioned_user_ids` (5) and `mentions_everyone` (6) in raw frames,
/// `UnreadCount.unread_mentions` (6) read from raw `ReadStateUpdate`s on the user's topic and
/// from raw `UnreadCounts` answers, the same after a crash and after a snapshot, and odd mention
/// lists refused with the field named.
@Suite(.serialized, .startsProcesses)
struct MentionWireTests {
    static let source = "py-gateway"
    static let conversation = "mention-1"

    static func event(_ sequence: UInt64, kindField: UInt64, _ body: [UInt8]) -> [UInt8] {
        RawProto.event(source: source, sequence: sequence, kindField: kindField, body)
    }

    /// ConversationUpserted (10): a group (kind 2) of a, b and c.
    static func upsert(_ sequence: UInt64) -> [UInt8] {
        event(sequence, kindField: 10, RawProto.groupUpserted(conversation, members: ["a", "b", "c"]))
    }

    /// MessageSent (13) from a, naming `named` (raw bytes each) and maybe everyone.
    static func sent(_ sequence: UInt64, _ message: String, named: [[UInt8]] = [], everyone: Bool = false) -> [UInt8] {
        event(
            sequence,
            kindField: 13,
            RawProto.field(1, conversation) + RawProto.field(2, message) + RawProto.field(3, "a")
                + named.flatMap { RawProto.field(5, bytes: $0) } + (everyone ? RawProto.field(6, varint: 1) : [])
        )
    }

    /// Read (15) by `user` up to `message`.
    static func read(_ sequence: UInt64, _ user: String, _ message: String) -> [UInt8] {
        event(
            sequence,
            kindField: 15,
            RawProto.field(1, conversation) + RawProto.field(2, user) + RawProto.field(3, message)
        )
    }

    /// The fields a badge needs of one raw `UnreadCount`.
    struct Badge: Equatable, CustomStringConvertible {
        var unread: UInt64 = 0
        var mentions: UInt64 = 0
        var readUpTo: UInt64 = 0

        var description: String { "unread \(unread), mentions \(mentions), read up to \(readUpTo)" }

        init(unread: UInt64, mentions: UInt64, readUpTo: UInt64) {
            (self.unread, self.mentions, self.readUpTo) = (unread, mentions, readUpTo)
        }

        init(raw bytes: [UInt8]) throws {
            for field in try RawProto.fields(bytes) {
                switch field.number {
                case 2: unread = field.value
                case 4: readUpTo = field.value
                case 6: mentions = field.value
                default: break
                }
            }
        }
    }

    /// b's badge in the conversation from a raw `ReadStateUpdate` (its `UnreadCount` is field 4).
    static func badge(update: [UInt8]) throws -> Badge {
        guard let state = try RawProto.fields(update).first(where: { $0.number == 4 }) else {
            throw IntegrationError("a read-state update without its state")
        }
        return try Badge(raw: state.bytes)
    }

    /// b's badge in the conversation as a raw `UnreadCountsQuery` (Query field 4, user 1) answers
    /// it (`QueryReply.unread_counts` is field 4, each `UnreadCount` its field 1).
    static func askedBadge(_ daemon: ReceiptdProcess) throws -> Badge {
        let requester = try ReadStateWireTests.requester(daemon)
        defer { requester.close() }
        _ = try requester.send([RawProto.field(4, bytes: RawProto.field(1, "b"))])
        guard let reply = try requester.receiveMultipart(), let body = reply.last,
            let counts = try RawProto.fields(body).first(where: { $0.number == 4 })
        else { throw IntegrationError("no unread counts answered") }
        for count in try RawProto.fields(counts.bytes) where count.number == 1 {
            if try RawProto.fields(count.bytes).contains(where: {
                $0.number == 1 && $0.bytes == Array(conversation.utf8)
            }) {
                return try Badge(raw: count.bytes)
            }
        }
        throw IntegrationError("b's counts do not list \(conversation)")
    }

    /// The next update on b's topic, skipping the probe's.
    static func nextBadge(_ socket: ZMQSocket) throws -> Badge? {
        let topic = ReadStateWireTests.frame(Partitioning.userTopic(for: "b"))
        let received = try ReadStateWireTests.receive(socket, timeoutMilliseconds: 5000) { $0[0] == topic }
        guard received.done, let last = received.messages.last else { return nil }
        return try badge(update: last[1])
    }

    @Test func mentionsReachTheNamedAndCountTheSameAfterACrashAndASnapshot() async throws {
        let daemon = try await ReceiptdProcess()
        let socket = try ReadStateWireTests.subscriber(
            daemon,
            prefixes: [Partitioning.exactUserTopic(for: "b"), Partitioning.exactUserTopic(for: "probe-b")]
        )
        defer { socket.close() }
        _ = try await ReadStateWireTests.attachByReadState(socket, daemon, probe: "mention-probe")

        // Joining tells b its (empty) state; b named twice, the sender and a stranger named
        // too: b is told once more, with one mention.
        RawEventResult.expect(try RawEventResult.exchange(daemon, [Self.upsert(1)]), [RawEventResult.accepted])
        #expect(try Self.nextBadge(socket) == Badge(unread: 0, mentions: 0, readUpTo: 0))
        RawEventResult.expect(
            try RawEventResult.exchange(
                daemon,
                [
                    Self.sent(2, "m1", named: [Array("b".utf8), Array("b".utf8), Array("a".utf8), Array("zed".utf8)])
                ]
            ),
            [RawEventResult.accepted]
        )
        #expect(try Self.nextBadge(socket) == Badge(unread: 1, mentions: 1, readUpTo: 0))

        // Everyone: nothing on b's topic (no update per member), but the answer counts it; the
        // next thing b's topic carries is b's own read.
        RawEventResult.expect(
            try RawEventResult.exchange(daemon, [Self.sent(3, "m2", everyone: true), Self.sent(4, "m3")]),
            [RawEventResult.accepted, RawEventResult.accepted]
        )
        #expect(try Self.askedBadge(daemon) == Badge(unread: 3, mentions: 2, readUpTo: 0))
        RawEventResult.expect(try RawEventResult.exchange(daemon, [Self.read(5, "b", "m1")]), [RawEventResult.accepted])
        #expect(try Self.nextBadge(socket) == Badge(unread: 2, mentions: 1, readUpTo: 1))

        // Replayed from the log after a crash, then restored from a snapshot: the same counts.
        daemon.kill9()
        try await daemon.start()
        #expect(try Self.askedBadge(daemon) == Badge(unread: 2, mentions: 1, readUpTo: 1))
        _ = try await daemon.client.compact(worker: 0)
        daemon.kill9()
        try await daemon.start()
        #expect(try Self.askedBadge(daemon) == Badge(unread: 2, mentions: 1, readUpTo: 1))
        RawEventResult.expect(try RawEventResult.exchange(daemon, [Self.read(6, "b", "m3")]), [RawEventResult.accepted])
        #expect(try Self.askedBadge(daemon) == Badge(unread: 0, mentions: 0, readUpTo: 3))
    }

    @Test func oddMentionListsAreRefusedWithTheFieldNamed() async throws {
        let daemon = try await ReceiptdProcess()
        RawEventResult.expect(try RawEventResult.exchange(daemon, [Self.upsert(1)]), [RawEventResult.accepted])

        // Bytes no id may hold: the whole frame is refused, naming the event and the field.
        let odd: [([UInt8], String)] = [
            ([0x62, 0xff], "is not valid UTF-8"), ([0x62, 0x00, 0x63], "holds a NUL byte"),
        ]
        for (bytes, problem) in odd {
            let body = try daemon.ingestRaw([RawProto.batch([Self.sent(2, "m1", named: [bytes])])])
            let refusal = try RawProto.fields(body).first { $0.number == 2 }
            let fields = try refusal.map { try RawProto.fields($0.bytes) } ?? []
            #expect(fields.first { $0.number == 1 }?.value == 8, "INVALID_ARGUMENT")
            let message = String(decoding: fields.first { $0.number == 2 }?.bytes ?? [], as: UTF8.self)
            #expect(message.contains("mentioned_user_ids[0] \(problem)"), "\(message)")
        }
        // An empty id, or more names than a message may have: that event is rejected, the rest
        // of the frame applies; a thousand names are taken.
        let thousand = (0..<Mentions.userLimit).map { Array("user-\($0)".utf8) }
        RawEventResult.expect(
            try RawEventResult.exchange(
                daemon,
                [
                    Self.sent(3, "m1", named: [Array("b".utf8), []]),
                    Self.sent(4, "m2", named: thousand + [Array("one-more".utf8)]),
                    Self.sent(5, "m3", named: thousand),
                ]
            ),
            [RawEventResult.invalidEvent, RawEventResult.invalidEvent, RawEventResult.accepted]
        )
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "invalid_argument") == 2)
        #expect(try Self.askedBadge(daemon) == Badge(unread: 1, mentions: 0, readUpTo: 0))
    }
}
