import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// The limits a hostile gateway hits, against the real daemon: frames in flight per
/// connection, events per batch, id length. Each refusal is clear, counted, and leaves
/// nothing of its frame applied.
@Suite(.serialized, .startsProcesses)
struct GatewayLimitsTests {
    /// A raw DEALER that puts a tag (a correlation frame the ROUTER echoes) before the empty
    /// delimiter, so that replies are matched to frames in whatever order they come.
    ///
    /// Raw, because it tests the wire contract itself: a gateway pipelining as many frames as
    /// it likes, which `ReceiptsClient` never does.
    private final class TaggedDealer {
        let socket: ZMQSocket

        init(_ daemon: ReceiptdProcess) throws {
            socket = try ZMQSocket(context: daemon.context, type: .dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.setReceiveTimeout(milliseconds: 10_000)
            try socket.connect(daemon.ingestEndpoint)
        }

        deinit { socket.close() }

        func send(tag: Int, _ events: [Event]) throws {
            _ = try socket.send([Array(String(tag).utf8), [], EventBatchCodec.encode(events)])
        }

        func receive() throws -> (tag: Int, reply: IngestReply) {
            guard let frames = try socket.receiveMultipart() else {
                throw IntegrationError("no ingest reply within 10 s")
            }
            guard frames.count == 3, frames[1].isEmpty, let tag = Int(String(decoding: frames[0], as: UTF8.self))
            else {
                throw IntegrationError("an ingest reply of \(frames.count) frames")
            }
            return (tag, try IngestReply.decode(frames[2]))
        }
    }

    /// An id of exactly `bytes` UTF-8 bytes and fewer characters ("é" is two bytes): the
    /// limit counts bytes.
    private static func id(_ prefix: String, bytes: Int) -> String {
        let padding = bytes - prefix.utf8.count
        return prefix + String(repeating: "é", count: padding / 2) + String(repeating: "-", count: padding % 2)
    }

    private static func upsert(_ conversation: String, members: [String] = ["a", "b"]) -> EventKind {
        .conversationUpserted(conversation: conversation, kind: .group, members: members)
    }

    private static func message(_ conversation: String, _ message: String) -> EventKind {
        .messageSent(conversation: conversation, message: message, sender: "a", isSystem: false)
    }

    /// Expects the conversation to be unknown to the daemon: nothing of a refused frame was applied.
    private static func expectUnknown(_ conversation: String, in daemon: ReceiptdProcess) async throws {
        let error = await #expect(throws: ReceiptsClientError.self, "\(conversation) must not exist") {
            try await daemon.client.snapshot(of: conversation)
        }
        #expect(error?.code == .notFound, "\(conversation): \(String(describing: error))")
    }

    // MARK: - Frames in flight

    @Test(
        "A DEALER pipelining past --max-frames-in-flight gets UNAVAILABLE at once for the excess; the rest is applied"
    )
    func framesInFlightLimit() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--max-frames-in-flight", "2"])
        let conversation = "in-flight"
        var events = EventFactory()
        _ = try await daemon.ingest([events.make(Self.upsert(conversation))])
        var sent: [Int: Event] = [:]
        for index in 0...24 {
            sent[index] = events.make(Self.message(conversation, "m\(index)"))
        }
        let gateway = try TaggedDealer(daemon)
        // Answered once, so that the connection is up and the burst below reaches the daemon's socket.
        try gateway.send(tag: 0, [sent[0]!])
        #expect(try gateway.receive().reply.results == [.accepted(held: false)])

        // Stopped, the daemon reads nothing: the burst waits in its socket, and once it continues
        // one turn of its loop takes the frames in faster than the log makes them durable.
        daemon.signal(SIGSTOP)
        for index in 1...24 { try gateway.send(tag: index, [sent[index]!]) }
        daemon.signal(SIGCONT)
        var replies: [Int: IngestReply] = [:]
        while replies.count < 24 {
            let (tag, reply) = try gateway.receive()
            replies[tag] = reply
        }
        let refused = replies.keys.filter { replies[$0]?.error != nil }.sorted()
        let accepted = replies.keys.filter { replies[$0]?.results == [.accepted(held: false)] }.sorted()
        #expect(refused.count + accepted.count == 24, "each frame is applied or refused whole: \(replies)")
        #expect(!refused.isEmpty, "24 frames at once must go past 2 in flight")
        #expect(accepted.count >= 2, "the first two frames are within the limit")
        for tag in refused {
            let error = try #require(replies[tag]?.error)
            #expect(error.code == .unavailable)
            #expect(error.message.contains("limit of frames in flight per connection is 2"), "\(error.message)")
        }
        #expect(try await daemon.counter("receiptd.limits.refused", label: "frames_in_flight") == UInt64(refused.count))
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "unavailable") == UInt64(refused.count))
        let applied = try await daemon.client.snapshot(of: conversation).snapshot.messages.map(\.message)
        #expect(Set(applied) == Set(([0] + accepted).map { "m\($0)" }), "exactly the accepted frames were applied")

        // Nothing stays counted once replies go out: two frames at a time (the limit), re-sent
        // the same way, are all taken in; a count leaked by one would refuse one of each pair.
        for start in stride(from: 0, to: refused.count, by: 2) {
            let pair = refused[start..<min(start + 2, refused.count)]
            daemon.signal(SIGSTOP)
            for tag in pair { try gateway.send(tag: tag, [sent[tag]!]) }
            daemon.signal(SIGCONT)
            for _ in pair {
                let (tag, reply) = try gateway.receive()
                #expect(reply.results == [.accepted(held: false)], "re-sent frame \(tag): \(reply)")
            }
        }
        #expect(try await daemon.counter("receiptd.limits.refused", label: "frames_in_flight") == UInt64(refused.count))
        #expect(try await daemon.client.snapshot(of: conversation).snapshot.messages.count == 25)
    }

    @Test(
        "ReceiptsClient with default batching is never refused: not by the default limit, not by one equal to its 8 frames",
        arguments: [[], ["--max-frames-in-flight", "8"]]
    )
    func wellBehavedClientIsNeverRefused(arguments: [String]) async throws {
        let daemon = try await ReceiptdProcess(arguments: arguments)
        let client = try daemon.client
        let conversations = (0..<8).map { "calm-\($0)" }
        _ = try await client.send(conversations.map { Self.upsert($0) })
        // 32 callers at once keep the client's frames in flight at its maximum. Rounds of 3200
        // events: concurrent callers may hand their numbered events to the client in another
        // order than numbered, and one left further behind than the worker's anti-replay window
        // (4096) would be answered `duplicate`.
        var outcomes: [EventOutcome] = []
        for round in 0..<5 {
            outcomes += try await within(60, "round \(round)") {
                try await withThrowingTaskGroup(of: [EventOutcome].self) { group in
                    for caller in 0..<32 {
                        group.addTask {
                            try await client.send(
                                (0..<100).map { Self.message(conversations[$0 % 8], "m\(round)-\(caller)-\($0)") }
                            )
                        }
                    }
                    return try await group.reduce(into: [EventOutcome]()) { $0 += $1 }
                }
            }
        }
        #expect(outcomes.count == 16_000)
        #expect(outcomes.allSatisfy { $0 == .accepted(held: false) })
        #expect(client.currentStatistics.framesSent >= 20, "each round's 3200 events take at least 4 frames")
        #expect(client.currentStatistics.unavailableReplies == 0)
        #expect(try await daemon.counter("receiptd.limits.refused", label: "frames_in_flight") == 0)
    }

    @Test("ReceiptsClient answered UNAVAILABLE for frames in flight backs off, sends again, and every event is applied")
    func clientBacksOffAndResends() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--max-frames-in-flight", "1"])
        var configuration = ReceiptsClient.Configuration(
            cluster: Cluster(workers: [Cluster.Worker(dataDirectory: daemon.dataDirectory)])
        )
        configuration.maxBatchEvents = 10  // 80 events: 8 frames in flight at once
        configuration.acknowledgementTimeoutMilliseconds = 5000
        configuration.queryTimeoutMilliseconds = 5000
        let client = try ReceiptsClient(configuration, logger: Logger(label: "gateway-limits-tests"))
        _ = try await client.send(Self.upsert("eager"))
        let before = client.currentStatistics.framesSent

        daemon.signal(SIGSTOP)
        let sending = Task.onOwnThread {
            try await withThrowingTaskGroup(of: [EventOutcome].self) { group in
                for caller in 0..<8 {
                    group.addTask { try await client.send((0..<10).map { Self.message("eager", "m\(caller)-\($0)") }) }
                }
                return try await group.reduce(into: [EventOutcome]()) { $0 += $1 }
            }
        }
        let deadline = Date().addingTimeInterval(10)
        while client.currentStatistics.framesSent < before + 8, Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        daemon.signal(SIGCONT)
        let outcomes = try await within(60, "the sends") { try await sending.value }

        #expect(outcomes.count == 80)
        #expect(outcomes.allSatisfy { $0 == .accepted(held: false) }, "\(outcomes)")
        let unavailable = client.currentStatistics.unavailableReplies
        #expect(unavailable >= 1, "8 frames at once must go past 1 in flight")
        #expect(try await daemon.counter("receiptd.limits.refused", label: "frames_in_flight") >= UInt64(unavailable))
        #expect(try await client.snapshot(of: "eager").snapshot.messages.count == 80)
        await client.shutdown()
    }

    // MARK: - Events per batch

    @Test("A batch over the events limit (RECEIPTD_MAX_BATCH_EVENTS) is refused whole, counted, not applied nor logged")
    func eventsPerBatchLimit() async throws {
        let daemon = try await ReceiptdProcess(environment: ["RECEIPTD_MAX_BATCH_EVENTS": "10"])
        let conversation = "batch-limit"
        var events = EventFactory()
        func batch(_ count: Int) -> [Event] {
            [events.make(Self.upsert(conversation))]
                + (1..<count).map { events.make(Self.message(conversation, "m\($0)")) }
        }

        let refused = try IngestReply.decode(try daemon.ingestRaw([EventBatchCodec.encode(batch(11))]))
        #expect(refused.results.isEmpty)
        #expect(refused.error?.code == .frameTooLarge)
        #expect(refused.error?.message == "batch of 11 events exceeds the limit of 10 events per batch")
        #expect(try await daemon.counter("receiptd.limits.refused", label: "events_per_batch") == 1)
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "frame_too_large") == 1)
        try await Self.expectUnknown(conversation, in: daemon)

        let taken = try IngestReply.decode(try daemon.ingestRaw([EventBatchCodec.encode(batch(10))]))
        #expect(taken.error == nil)
        #expect(taken.results == Array(repeating: .accepted(held: false), count: 10))
        #expect(try await daemon.counter("receiptd.limits.refused", label: "events_per_batch") == 1)

        // The refused batch (m1...m10) is not in the log: after a restart only m1...m9 are there.
        #expect(try await daemon.terminate() == 0)
        try await daemon.start()
        let messages = try await daemon.client.snapshot(of: conversation).snapshot.messages.map(\.message)
        #expect(Set(messages) == Set((1...9).map { "m\($0)" }))
    }

    // MARK: - Id length

    @Test(
        "An id over --max-id-bytes in any field refuses its frame with INVALID_ARGUMENT naming it; the limit is taken"
    )
    func idLengthLimit() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--max-id-bytes", "16"])
        var events = EventFactory()
        let long = { (prefix: String) in Self.id(prefix, bytes: 17) }
        var longSource = EventFactory(source: long("gw"))
        let cases: [(field: String, event: Event)] = [
            ("id.source", longSource.make(.userDeleted(user: "u"))),
            ("conversation_id", events.make(Self.upsert(long("c")))),
            ("member_ids[1]", events.make(Self.upsert("fine", members: ["a", long("m")]))),
            ("user_id", events.make(.delivered(conversation: "fine", user: long("u"), message: "m1"))),
            ("message_id", events.make(Self.message("fine", long("m")))),
            (
                "sender_id",
                events.make(.messageSent(conversation: "fine", message: "m1", sender: long("s"), isSystem: false))
            ),
        ]
        for (index, (field, event)) in cases.enumerated() {
            // A valid event first: the whole frame is refused, not just the event over the limit.
            let first = events.make(Self.upsert("fresh-\(index)"))
            let reply = try IngestReply.decode(try daemon.ingestRaw([EventBatchCodec.encode([first, event])]))
            #expect(reply.results.isEmpty, "\(field)")
            #expect(reply.error?.code == .invalidArgument, "\(field)")
            #expect(reply.error?.message == "event 1: \(field) is 17 bytes, over the limit of 16 bytes per id")
            try await Self.expectUnknown("fresh-\(index)", in: daemon)
        }
        #expect(try await daemon.counter("receiptd.limits.refused", label: "id_length") == UInt64(cases.count))
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "invalid_argument") == UInt64(cases.count))

        // Every id exactly at the limit, in events that all apply.
        let (conversation, sender, reader, message) = (
            Self.id("c", bytes: 16), Self.id("s", bytes: 16), Self.id("u", bytes: 16), Self.id("m", bytes: 16)
        )
        var limitSource = EventFactory(source: Self.id("gw", bytes: 16))
        let taken = try IngestReply.decode(
            try daemon.ingestRaw([
                EventBatchCodec.encode([
                    limitSource.make(Self.upsert(conversation, members: [sender, reader])),
                    limitSource.make(
                        .messageSent(conversation: conversation, message: message, sender: sender, isSystem: false)
                    ),
                    limitSource.make(.delivered(conversation: conversation, user: reader, message: message)),
                ])
            ])
        )
        #expect(taken.error == nil)
        #expect(taken.results == Array(repeating: .accepted(held: false), count: 3))
        let status = try await daemon.status(conversation, message, viewer: Viewer(user: sender)).status
        #expect(status.status == .delivered)

        // Queries: an id over the limit is refused the same way.
        let error = await #expect(throws: ReceiptsClientError.self) {
            try await daemon.status(long("c"), message, viewer: Viewer(user: sender))
        }
        #expect(error?.code == .invalidArgument)
        #expect(
            error?.message.contains("query: conversation_id is 17 bytes, over the limit of 16 bytes per id") == true,
            "\(String(describing: error))"
        )
        #expect(try await daemon.counter("receiptd.limits.refused", label: "id_length") == UInt64(cases.count) + 1)
    }

    // MARK: - Fire-and-forget

    @Test("Batches over the limits on the fire-and-forget SUB endpoint are counted and logged, nothing of them applied")
    func fireAndForgetRefusals() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--max-batch-events", "2", "--max-id-bytes", "16"])
        var events = EventFactory()
        let tooMany = EventBatchCodec.encode([
            events.make(Self.upsert("sub-many")), events.make(Self.message("sub-many", "m1")),
            events.make(Self.message("sub-many", "m2")),
        ])
        let tooLong = EventBatchCodec.encode([
            events.make(Self.upsert("sub-long")),
            events.make(.memberJoined(conversation: "sub-long", user: Self.id("u", bytes: 17))),
        ])
        let fine = EventBatchCodec.encode([events.make(Self.upsert("sub-fine"))])
        // A raw socket: it tests the wire contract itself (the fire-and-forget PUB -> SUB ingest).
        let publisher = try ZMQSocket(context: daemon.context, type: .pub)
        defer { publisher.close() }
        try publisher.setLinger(milliseconds: 1000)
        try publisher.connect(daemon.ingestSubscribeEndpoint)
        // At-most-once with a slow joiner: send until the daemon counted both (and took the fine one).
        var counted = (batch: UInt64(0), id: UInt64(0))
        for _ in 0..<50 where counted.batch == 0 || counted.id == 0 {
            for frame in [tooMany, tooLong, fine] { _ = try publisher.send([frame]) }
            try await Task.sleep(for: .milliseconds(100))
            counted = (
                try await daemon.counter("receiptd.limits.refused", label: "events_per_batch"),
                try await daemon.counter("receiptd.limits.refused", label: "id_length")
            )
        }
        #expect(counted.batch >= 1)
        #expect(counted.id >= 1)
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "frame_too_large") == counted.batch)
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "invalid_argument") == counted.id)
        let log = daemon.standardError()
        #expect(log.contains(#""frame.limit":"events_per_batch""#) && log.contains(#""frame.limit":"id_length""#))
        try await Self.expectUnknown("sub-many", in: daemon)
        try await Self.expectUnknown("sub-long", in: daemon)
        #expect(try await daemon.client.snapshot(of: "sub-fine").snapshot.members.sorted() == ["a", "b"])
    }

    // MARK: - Configuration

    @Test(
        "A limit of 0, out of range or not a number stops receiptd at start, naming the setting",
        arguments: [
            (["--max-frames-in-flight", "0"], [:], "max frames in flight must be in 1...65536, got 0"),
            ([], ["RECEIPTD_MAX_FRAMES_IN_FLIGHT": "65537"], "max frames in flight must be in 1...65536, got 65537"),
            (["--max-batch-events", "0"], [:], "max batch events must be in 1...1000000, got 0"),
            ([], ["RECEIPTD_MAX_BATCH_EVENTS": "many"], "RECEIPTD_MAX_BATCH_EVENTS=many is not a valid number"),
            (["--max-id-bytes", "65537"], [:], "max id bytes must be in 1...65536, got 65537"),
            ([], ["RECEIPTD_MAX_ID_BYTES": "0"], "max id bytes must be in 1...65536, got 0"),
        ] as [([String], [String: String], String)]
    )
    func invalidLimitsStopTheStart(arguments: [String], environment: [String: String], message: String) async throws {
        let directory = try TemporaryDirectory.make(prefix: "rdlim")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let process = ReceiptdLauncher.process(
            arguments: ["--data-dir", directory, "--http", "off"] + arguments,
            environment: environment
        )
        let output = Pipe()
        process.standardError = output
        process.standardOutput = output
        try process.runInTurn()
        guard await process.exited(within: 15) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            Issue.record("receiptd \(arguments) \(environment) did not stop on its own")
            return
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus != 0)
        #expect(text.contains(message), "\(text)")
    }
}
