import Foundation
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// Threads against the real daemon, written and read as a gateway in another language does
/// (issue 31): `MessageSent.thread_root_id` (7) and `Read.thread_root_id` (4) in raw frames,
/// `ReadStateUpdate.thread_state` (6) and `UnreadCount.unread_threads` (7) read from raw updates,
/// `UnreadCounts.threads` (4) and `MessageStatus.thread_root_id` (16) from raw answers, the same
/// after a crash and after a snapshot, and odd thread ids refused.
@Suite(.serialized, .startsProcesses)
struct ThreadWireTests {
    static let source = "go-gateway"
    static let conversation = "thread-1"

    static func event(_ sequence: UInt64, kindField: UInt64, _ body: [UInt8]) -> [UInt8] {
        RawProto.event(source: source, sequence: sequence, kindField: kindField, body)
    }

    /// ConversationUpserted (10): a group (kind 2) of a, b and c.
    static func upsert(_ sequence: UInt64) -> [UInt8] {
        event(sequence, kindField: 10, RawProto.groupUpserted(conversation, members: ["a", "b", "c"]))
    }

    /// MessageSent (13) from `sender`, replying in `thread` (raw bytes) when given.
    static func sent(_ sequence: UInt64, _ message: String, from sender: String, thread: [UInt8]? = nil) -> [UInt8] {
        event(
            sequence,
            kindField: 13,
            RawProto.field(1, conversation) + RawProto.field(2, message) + RawProto.field(3, sender)
                + (thread.map { RawProto.field(7, bytes: $0) } ?? [])
        )
    }

    /// Read (15) by `user` up to `message` ("" for all), in `thread` when given.
    static func read(_ sequence: UInt64, _ user: String, _ message: String, thread: String? = nil) -> [UInt8] {
        event(
            sequence,
            kindField: 15,
            RawProto.field(1, conversation) + RawProto.field(2, user) + RawProto.field(3, message)
                + (thread.map { RawProto.field(4, $0) } ?? [])
        )
    }

    /// The fields of one raw `ThreadReadState` a badge needs.
    struct ThreadBadge: Equatable, CustomStringConvertible {
        var root = ""
        var unread: UInt64 = 0
        var readUpTo: UInt64 = 0
        var following = false

        var description: String { "\(root): unread \(unread), read up to \(readUpTo), following \(following)" }

        init(root: String, unread: UInt64, readUpTo: UInt64, following: Bool) {
            (self.root, self.unread, self.readUpTo, self.following) = (root, unread, readUpTo, following)
        }

        init(raw bytes: [UInt8]) throws {
            for field in try RawProto.fields(bytes) {
                switch field.number {
                case 2: root = String(decoding: field.bytes, as: UTF8.self)
                case 3: unread = field.value
                case 5: readUpTo = field.value
                case 6: following = field.value != 0
                default: break
                }
            }
        }
    }

    /// `user`'s next update on their topic: the thread's state in it (nil without one) and the
    /// conversation's `unread_threads`.
    static func nextUpdate(_ socket: ZMQSocket, of user: String) throws -> (thread: ThreadBadge?, unreadThreads: UInt64)
    {
        let topic = ReadStateWireTests.frame(Partitioning.userTopic(for: user))
        let received = try ReadStateWireTests.receive(socket, timeoutMilliseconds: 5000) { $0[0] == topic }
        guard received.done, let last = received.messages.last else {
            throw IntegrationError("no update on \(user)'s topic")
        }
        let fields = try RawProto.fields(last[1])
        let thread = try fields.first { $0.number == 6 }.map { try ThreadBadge(raw: $0.bytes) }
        let state = try fields.first { $0.number == 4 }.map { try RawProto.fields($0.bytes) } ?? []
        return (thread, state.first { $0.number == 7 }?.value ?? 0)
    }

    /// `user`'s threads and the conversation's `unread_threads`, as a raw `UnreadCountsQuery`
    /// answers them.
    static func asked(
        _ daemon: ReceiptdProcess,
        _ user: String
    ) throws -> (threads: [ThreadBadge], unreadThreads: UInt64) {
        let requester = try ReadStateWireTests.requester(daemon)
        defer { requester.close() }
        _ = try requester.send([RawProto.field(4, bytes: RawProto.field(1, user))])
        guard let reply = try requester.receiveMultipart(), let body = reply.last,
            let counts = try RawProto.fields(body).first(where: { $0.number == 4 })
        else { throw IntegrationError("no unread counts answered") }
        let fields = try RawProto.fields(counts.bytes)
        let threads = try fields.filter { $0.number == 4 }.map { try ThreadBadge(raw: $0.bytes) }
        let count = try fields.first { $0.number == 1 }.map { try RawProto.fields($0.bytes) } ?? []
        return (threads, count.first { $0.number == 7 }?.value ?? 0)
    }

    /// The fields of the `MessageStatus` a raw `MessageStatusQuery` (Query field 1) answers.
    static func askedStatus(
        _ daemon: ReceiptdProcess,
        _ message: String
    ) throws -> [(number: UInt64, value: UInt64, bytes: [UInt8])] {
        let requester = try ReadStateWireTests.requester(daemon)
        defer { requester.close() }
        _ = try requester.send([RawProto.field(1, bytes: RawProto.field(1, conversation) + RawProto.field(2, message))])
        guard let reply = try requester.receiveMultipart(), let body = reply.last,
            let status = try RawProto.fields(body).first(where: { $0.number == 1 })
        else { throw IntegrationError("no status answered") }
        return try RawProto.fields(status.bytes)
    }

    /// The `thread_root_id` (16) of a message's raw status.
    static func askedRoot(_ daemon: ReceiptdProcess, _ message: String) throws -> String {
        String(decoding: try askedStatus(daemon, message).first { $0.number == 16 }?.bytes ?? [], as: UTF8.self)
    }

    /// The `read_count` (9) of a message's raw status.
    static func askedReadCount(_ daemon: ReceiptdProcess, _ message: String) throws -> UInt64 {
        try askedStatus(daemon, message).first { $0.number == 9 }?.value ?? 0
    }

    @Test func aThreadIsReadInItsThreadAndCountsTheSameAfterACrashAndASnapshot() async throws {
        let daemon = try await ReceiptdProcess()
        let socket = try ReadStateWireTests.subscriber(
            daemon,
            prefixes: [Partitioning.exactUserTopic(for: "a"), Partitioning.exactUserTopic(for: "probe-b")]
        )
        defer { socket.close() }
        _ = try await ReadStateWireTests.attachByReadState(socket, daemon, probe: "thread-probe")

        RawEventResult.expect(
            try RawEventResult.exchange(daemon, [Self.upsert(1), Self.sent(2, "m1", from: "a")]),
            [RawEventResult.accepted, RawEventResult.accepted]
        )
        _ = try Self.nextUpdate(socket, of: "a")  // a joins
        // b replies in m1's thread: a, m1's sender, follows it and is told, with the
        // conversation's count of threads with unread replies.
        RawEventResult.expect(
            try RawEventResult.exchange(daemon, [Self.sent(3, "r1", from: "b", thread: Array("m1".utf8))]),
            [RawEventResult.accepted]
        )
        let told = try Self.nextUpdate(socket, of: "a")
        #expect(told.thread == ThreadBadge(root: "m1", unread: 1, readUpTo: 0, following: true))
        #expect(told.unreadThreads == 1)
        #expect(try Self.askedRoot(daemon, "r1") == "m1")
        #expect(try Self.askedRoot(daemon, "m1") == "")

        // A read of the main timeline does not read the reply; a read in the thread does.
        RawEventResult.expect(try RawEventResult.exchange(daemon, [Self.read(4, "c", "")]), [RawEventResult.accepted])
        #expect(try Self.asked(daemon, "a").unreadThreads == 1)
        RawEventResult.expect(
            try RawEventResult.exchange(daemon, [Self.read(5, "a", "", thread: "m1")]),
            [RawEventResult.accepted]
        )
        let read = try Self.nextUpdate(socket, of: "a")
        #expect(read.thread == ThreadBadge(root: "m1", unread: 0, readUpTo: 2, following: true))
        #expect(read.unreadThreads == 0)

        // c replies: a's thread is unread again. Replayed after a crash, restored from a snapshot:
        // the same.
        RawEventResult.expect(
            try RawEventResult.exchange(daemon, [Self.sent(6, "r2", from: "c", thread: Array("m1".utf8))]),
            [RawEventResult.accepted]
        )
        let expected = ([ThreadBadge(root: "m1", unread: 1, readUpTo: 2, following: true)], UInt64(1))
        var answer = try Self.asked(daemon, "a")
        #expect(answer.threads == expected.0 && answer.unreadThreads == expected.1)
        daemon.kill9()
        try await daemon.start()
        answer = try Self.asked(daemon, "a")
        #expect(answer.threads == expected.0 && answer.unreadThreads == expected.1, "after the log's replay")
        _ = try await daemon.client.compact(worker: 0)
        daemon.kill9()
        try await daemon.start()
        answer = try Self.asked(daemon, "a")
        #expect(answer.threads == expected.0 && answer.unreadThreads == expected.1, "after the snapshot")
    }

    /// Reads naming m1's thread and messages not yet known are held, in one frame, and held
    /// again when the log replays after a SIGKILL: the one whose message then arrives in the
    /// main timeline is not applied there, the one whose message is a reply in m1's thread is.
    @Test func aHeldReadKeepsItsThreadAcrossACrash() async throws {
        let daemon = try await ReceiptdProcess()
        let accepted = RawEventResult.accepted
        RawEventResult.expect(
            try RawEventResult.exchange(
                daemon,
                [
                    Self.upsert(1), Self.sent(2, "m1", from: "a"), Self.read(3, "c", "x1", thread: "m1"),
                    Self.read(4, "c", "r1", thread: "m1"),
                ]
            ),
            [accepted, accepted, accepted, accepted]
        )
        daemon.kill9()
        try await daemon.start()
        RawEventResult.expect(
            try RawEventResult.exchange(
                daemon,
                [Self.sent(5, "x1", from: "b"), Self.sent(6, "r1", from: "b", thread: Array("m1".utf8))]
            ),
            [accepted, accepted]
        )
        #expect(try Self.askedReadCount(daemon, "x1") == 0, "x1 is not a reply in m1's thread")
        #expect(try Self.askedReadCount(daemon, "r1") == 1, "r1 is: c's held read applies there")
    }

    @Test func oddThreadsAreRefusedWithTheFieldNamed() async throws {
        let daemon = try await ReceiptdProcess()
        RawEventResult.expect(
            try RawEventResult.exchange(daemon, [Self.upsert(1), Self.sent(2, "m1", from: "a")]),
            [RawEventResult.accepted, RawEventResult.accepted]
        )
        // Bytes no id may hold: the whole frame is refused, naming the event and the field.
        let odd: [([UInt8], String)] = [
            ([0x6d, 0xff], "is not valid UTF-8"), ([0x6d, 0x00, 0x31], "holds a NUL byte"),
        ]
        for (bytes, problem) in odd {
            let body = try daemon.ingestRaw([RawProto.batch([Self.sent(3, "r1", from: "b", thread: bytes)])])
            let refusal = try RawProto.fields(body).first { $0.number == 2 }
            let fields = try refusal.map { try RawProto.fields($0.bytes) } ?? []
            #expect(fields.first { $0.number == 1 }?.value == 8, "INVALID_ARGUMENT")
            let message = String(decoding: fields.first { $0.number == 2 }?.bytes ?? [], as: UTF8.self)
            #expect(message.contains("thread_root_id \(problem)"), "\(message)")
        }
        // An unknown root, and a read naming a thread its message is not in: those events are
        // rejected, the rest of the frame applies.
        RawEventResult.expect(
            try RawEventResult.exchange(
                daemon,
                [
                    Self.sent(4, "r1", from: "b", thread: Array("nope".utf8)),
                    Self.sent(5, "r2", from: "b", thread: Array("m1".utf8)),
                    Self.read(6, "c", "m1", thread: "m1"),
                    Self.read(7, "c", "r2", thread: "m1"),
                ]
            ),
            [(3, 11), RawEventResult.accepted, RawEventResult.invalidEvent, RawEventResult.accepted]
        )
    }
}
