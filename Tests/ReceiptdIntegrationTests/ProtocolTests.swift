import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// The wire contract with the real daemon: snapshots and gaps, duplicates, bad input.
@Suite(.serialized, .startsProcesses)
struct ProtocolTests {
    @Test("A late subscriber recovers through a snapshot with no gap and no duplicate")
    func lateJoinerRecoversFromSnapshot() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        let group = "late-join"
        let members = ["s", "r1", "r2", "r3"]
        _ = try await daemon.ingest([
            events.make(.conversationUpserted(conversation: group, kind: .group, members: members))
        ])
        for index in 1...5 {
            _ = try await daemon.ingest([
                events.make(.messageSent(conversation: group, message: "m\(index)", sender: "s", isSystem: false))
            ])
        }
        _ = try await daemon.ingest([events.make(.delivered(conversation: group, user: "r1", message: "m5"))])

        // Clone pattern: subscribe first, then snapshot, then continue after its sequence.
        let subscriber = try await daemon.subscribe(to: group)
        let positioned = try await daemon.client.snapshot(of: group)
        let (snapshot, epoch, sequence) = (positioned.snapshot, positioned.publisherRun, positioned.sequence)
        #expect(snapshot.messages.map(\.message) == ["m1", "m2", "m3", "m4", "m5"])
        #expect(snapshot.members.sorted() == members.sorted())
        #expect(sequence >= 6, "one update per sent message and at least one for the delivery")

        var state = Dictionary(uniqueKeysWithValues: snapshot.messages.map { ($0.message, $0) })
        _ = try await daemon.ingest([
            events.make(.delivered(conversation: group, user: "r2", message: "m5")),
            events.make(.delivered(conversation: group, user: "r3", message: "m5")),
            events.make(.read(conversation: group, user: "r1", message: "m3")),
        ])
        var expected = sequence + 1
        // One update per changed message per batch: read until both final states arrived.
        var seenRead = false
        var seenDelivered = false
        let updates = try subscriber.updates { update in
            seenRead = seenRead || (update.status.message == "m3" && update.status.status == .readBySome)
            seenDelivered = seenDelivered || (update.status.message == "m5" && update.status.status == .delivered)
            return seenRead && seenDelivered
        }
        // Clone pattern: an update at or before the snapshot's sequence is already in it.
        for update in updates where update.sequence > sequence {
            #expect(update.publisherRun == epoch)
            #expect(update.sequence == expected, "no gap and no duplicate after the snapshot")
            expected = update.sequence + 1
            state[update.status.message] = update.status
        }
        for message in ["m1", "m2", "m3", "m4", "m5"] {
            let queried = try await daemon.status(group, message, viewer: Viewer(user: "s")).status
            #expect(state[message] == queried, "snapshot + updates reproduce the daemon's state for \(message)")
        }
    }

    @Test("A subscriber that misses updates sees the gap and repairs it from a snapshot")
    func gapRepairedFromSnapshot() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        let direct = "gap-repair"
        _ = try await daemon.ingest([
            events.make(.conversationUpserted(conversation: direct, kind: .direct, members: ["a", "b"])),
            events.make(.messageSent(conversation: direct, message: "m1", sender: "a", isSystem: false)),
        ])
        let first = try await daemon.subscribe(to: direct)
        _ = try await daemon.ingest([
            events.make(.messageSent(conversation: direct, message: "m2", sender: "a", isSystem: false))
        ])
        // Subscribers read up to the update they wait for; an earlier one is not a gap.
        let before = try #require(try first.updates { $0.status.message == "m2" }.last)

        // Disconnect while updates happen, then come back.
        first.socket.close()
        _ = try await daemon.ingest([events.make(.delivered(conversation: direct, user: "b", message: "m2"))])
        let second = try await daemon.subscribe(to: direct)
        _ = try await daemon.ingest([events.make(.read(conversation: direct, user: "b", message: "m1"))])
        let after = try #require(try second.updates { $0.status.message == "m1" && $0.status.status == .read }.last)
        #expect(after.sequence > before.sequence + 1, "the missed delivery updates leave a visible gap")

        let repaired = try await daemon.client.snapshot(of: direct)
        #expect(repaired.sequence >= after.sequence)
        #expect(repaired.snapshot.messages.first { $0.message == "m2" }?.status == .delivered)
        #expect(repaired.snapshot.messages.first { $0.message == "m1" }?.status == .read)
    }

    @Test("A resent batch is acknowledged as duplicates and not applied twice")
    func resentBatchIsDuplicate() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        let group = "dup"
        let batch = [
            events.make(.conversationUpserted(conversation: group, kind: .group, members: ["a", "b", "c"])),
            events.make(.messageSent(conversation: group, message: "m1", sender: "a", isSystem: false)),
            events.make(.read(conversation: group, user: "b", message: "m1")),
        ]
        let first = try await daemon.ingest(batch)
        #expect(first.allSatisfy { $0 == .accepted(held: false) })
        let before = try await daemon.status(group, "m1", viewer: Viewer(user: "a")).status

        let again = try await daemon.ingest(batch)
        #expect(again == [.duplicate, .duplicate, .duplicate])
        let after = try await daemon.status(group, "m1", viewer: Viewer(user: "a")).status
        #expect(after == before)
        #expect(after.readCount == 1)
        #expect(try await daemon.counter("receiptd.events.duplicate") == 3)
    }

    @Test("Bad input gets clear errors and counters while another gateway's traffic goes on")
    func badInputIsAnsweredAndCounted() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--max-frame-bytes", "4096"])
        var events = EventFactory()
        let direct = "bad-input"
        _ = try await daemon.ingest([
            events.make(.conversationUpserted(conversation: direct, kind: .direct, members: ["a", "b"])),
            events.make(.messageSent(conversation: direct, message: "m1", sender: "a", isSystem: false)),
        ])

        // A second, well-behaved gateway with a client of its own.
        let other = try daemon.makeClient(source: "good-gateway")
        func otherGatewaySends(_ message: String) async throws {
            let outcome = try await other.send(
                .messageSent(conversation: direct, message: message, sender: "b", isSystem: false)
            )
            #expect(outcome == .accepted(held: false))
        }

        let garbage = try IngestReply.decode(
            try daemon.ingestRaw([Array("definitely not protobuf \u{0}\u{1}\u{2}".utf8) + [0xff, 0xff, 0xff]])
        )
        #expect(garbage.error?.code == .malformedFrame)
        try await otherGatewaySends("g1")

        let twoBodies = try IngestReply.decode(
            try daemon.ingestRaw([EventBatchCodec.encode([]), EventBatchCodec.encode([])])
        )
        #expect(twoBodies.error?.code == .wrongFrameCount)
        try await otherGatewaySends("g2")

        let oversized = try IngestReply.decode(try daemon.ingestRaw([[UInt8](repeating: 0x0a, count: 5000)]))
        #expect(oversized.error?.code == .frameTooLarge)
        try await otherGatewaySends("g3")

        let mixed = try await daemon.ingest([
            events.make(.unknown),
            events.make(.read(conversation: direct, user: "mallory", message: "m1")),
            events.make(.delivered(conversation: direct, user: "b", message: "m1")),
        ])
        guard mixed.count == 3 else {
            Issue.record("expected 3 results, got \(mixed)")
            return
        }
        if case .rejected(let rejection) = mixed[0] {
            #expect(rejection.reason == .unknownEventKind)
        } else {
            Issue.record("unknown kind not rejected: \(mixed[0])")
        }
        if case .rejected(let rejection) = mixed[1] {
            #expect(rejection.reason == .notARecipient || rejection.reason == .notAMember)
        } else {
            Issue.record("non-recipient not rejected: \(mixed[1])")
        }
        #expect(mixed[2] == .accepted(held: false))
        try await otherGatewaySends("g4")

        #expect(try await daemon.counter("receiptd.frames.invalid", label: "malformed_frame") == 1)
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "wrong_frame_count") == 1)
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "frame_too_large") == 1)
        #expect(try await daemon.counter("receiptd.events.rejected", label: "unknown_event_kind") == 1)
        #expect(try await daemon.status(direct, "m1", viewer: Viewer(user: "a")).status.status == .delivered)

        // Queries: garbage and an empty Query get error replies too.
        // A raw socket: it tests the wire contract itself (input no client sends).
        let requester = try ZMQSocket(context: daemon.context, type: .req)
        defer { requester.close() }
        try requester.setReceiveTimeout(milliseconds: 5000)
        try requester.connect(daemon.queryEndpoint)
        _ = try requester.send([[0xff, 0x01, 0x02]])
        guard case .error(let queryError) = try QueryReply.decode(try #require(try requester.receiveMultipart()?.last))
        else {
            Issue.record("garbage query was not answered with an error")
            return
        }
        #expect(queryError.code == .malformedFrame)
        _ = try requester.send([[]])
        guard case .error(let emptyError) = try QueryReply.decode(try #require(try requester.receiveMultipart()?.last))
        else {
            Issue.record("empty query was not answered with an error")
            return
        }
        #expect(emptyError.code == .unknownKind)
    }

    @Test("Fire-and-forget ingest over SUB applies events and publishes their statuses")
    func fireAndForgetIngest() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        let direct = "fire-and-forget"
        _ = try await daemon.ingest([
            events.make(.conversationUpserted(conversation: direct, kind: .direct, members: ["a", "b"])),
            events.make(.messageSent(conversation: direct, message: "m1", sender: "a", isSystem: false)),
        ])
        let subscriber = try await daemon.subscribe(to: direct)
        // A raw socket: it tests the wire contract itself (the fire-and-forget PUB -> SUB ingest).
        let publisher = try ZMQSocket(context: daemon.context, type: .pub)
        defer { publisher.close() }
        try publisher.setLinger(milliseconds: 1000)
        try publisher.connect(daemon.ingestSubscribeEndpoint)
        let frame = EventBatchCodec.encode([events.make(.read(conversation: direct, user: "b", message: "m1"))])
        // At-most-once transport with a slow joiner: resend the same event (a duplicate is harmless) until it lands.
        // Updates other than the read's (none expected) are skipped, not mistaken for it.
        var read = false
        for _ in 0..<20 where !read {
            _ = try publisher.send([frame])
            while !read, let update = try subscriber.next(timeoutMilliseconds: 250) {
                read = update.status.message == "m1" && update.status.status == .read
            }
        }
        #expect(read, "the fire-and-forget read was applied and published")
    }

    @Test("A worker rejects events and queries for conversations it does not own, naming the owner")
    func ownershipIsEnforced() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--worker-count", "4", "--worker-index", "1"])
        var events = EventFactory()
        let conversations = (0..<24).map { "own-\($0)" }
        // The daemon's own client talks to it as worker 0 of 1, so every event reaches it.
        let outcomes = try await daemon.ingest(
            conversations.map { conversation in
                events.make(.conversationUpserted(conversation: conversation, kind: .direct, members: ["a", "b"]))
            }
        )
        #expect(outcomes.count == conversations.count)
        for (conversation, outcome) in zip(conversations, outcomes) {
            let owner = Partitioning.owner(of: conversation, workerCount: 4)
            if owner == 1 {
                #expect(outcome == .accepted(held: false))
            } else if case .rejected(let rejection) = outcome {
                #expect(rejection.reason == .notOwner)
                #expect(rejection.ownerWorker == owner)
                #expect(rejection.detail.contains("\(owner)"))
            } else {
                Issue.record("\(conversation) owned by \(owner) was not rejected: \(outcome)")
            }
        }
        let foreign = try #require(conversations.first { Partitioning.owner(of: $0, workerCount: 4) != 1 })
        let error = try await #require(throws: ReceiptsClientError.self) {
            try await daemon.client.snapshot(of: foreign)
        }
        #expect(error.code == .notOwner)
        #expect(error.ownerWorker == Partitioning.owner(of: foreign, workerCount: 4))
    }

    @Test("A receipt that arrives before its message is held, applied when the message arrives, and survives a restart")
    func receiptBeforeMessageIsHeld() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        let direct = "early-receipt"
        _ = try await daemon.ingest([
            events.make(.conversationUpserted(conversation: direct, kind: .direct, members: ["a", "b"]))
        ])
        let early = try await daemon.ingest([events.make(.read(conversation: direct, user: "b", message: "m1"))])
        #expect(early == [.accepted(held: true)])
        #expect(try await daemon.counter("receiptd.events.held") == 1)

        _ = try await daemon.ingest([
            events.make(.messageSent(conversation: direct, message: "m1", sender: "a", isSystem: false))
        ])
        #expect(try await daemon.status(direct, "m1", viewer: Viewer(user: "a")).status.status == .read)

        #expect(try await daemon.terminate() == 0)
        let restarted = try await ReceiptdProcess(dataDirectory: daemon.dataDirectory)
        #expect(try await restarted.status(direct, "m1", viewer: Viewer(user: "a")).status.status == .read)
    }
}
