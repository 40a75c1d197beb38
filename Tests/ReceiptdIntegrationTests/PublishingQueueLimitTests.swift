import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Synchronization
import Testing

/// `--publish-queue-limit` on the real binary. With a limit of 1, one frame's burst of updates
/// overflows the queue for real: the worker hands them over back to back, while `receiptd-pub`
/// takes one per wake-up. The drops are counted in the stats and on `/metrics`, show on the
/// wire as sequence gaps, and a `ReceiptsClient` subscription repairs them from a snapshot and
/// ends equal to one.
@Suite(.startsProcesses) struct PublishingQueueLimitTests {
    // The limit counts the wait for a slot of `.startsProcesses` as well as the test.
    @Test(.timeLimit(.minutes(10)))
    func droppedUpdatesAreCountedAndASubscriberEndsEqualToASnapshot() async throws {
        // Without read-state updates, every update of a frame is one of the conversation's.
        let daemon = try await ReceiptdProcess(arguments: ["--publish-queue-limit", "1", "--no-read-state-updates"])
        let address = try #require(daemon.httpAddress)
        let conversation = "queue-limit"
        var events = EventFactory()
        _ = try await daemon.ingest([
            events.make(
                .conversationUpserted(conversation: conversation, kind: .group, members: ["ann", "bob", "cem"])
            )
        ])
        let wire = try await daemon.subscribe(to: conversation)
        let client = try daemon.client

        // The client's subscription: the last status it showed per message.
        let shown = Mutex<[String: MessageStatus]>([:])
        let updates = client.subscribe(to: .conversation(conversation))
        let consumer = Task.onOwnThread {
            for await update in updates { shown.withLock { $0[update.status.message] = update.status } }
        }
        defer { consumer.cancel() }
        _ = try await daemon.ingest([
            events.make(.messageSent(conversation: conversation, message: "p0", sender: "ann", isSystem: false))
        ])
        try await Self.waitUntil("the subscription shows p0") { shown.withLock { $0["p0"] != nil } }
        let repairsBefore = client.currentStatistics.snapshotRepairs

        // One frame of 300 new messages: 300 updates handed over at once.
        let burst = (1...300).map {
            events.make(.messageSent(conversation: conversation, message: "m\($0)", sender: "ann", isSystem: false))
        }
        let replies = try daemon.ingestPipelined([burst])
        #expect(replies.allSatisfy { $0.error == nil && $0.results.count == 300 }, "\(replies)")
        let dropped = try await daemon.counter("receiptd.updates.dropped")
        #expect(dropped > 0, "a limit of 1 took a burst of 300 without a drop")
        #expect(dropped < 300, "the first update of the burst finds the queue empty")

        // Once the thread has taken what was queued, the next update goes through and shows the gap.
        var metrics = ""
        try await Self.waitUntil("the publishing queue drains") {
            metrics = try await HTTPProbe.get(address, "/metrics").body
            return HTTPEndpointTests.sample("receiptd_publish_queue_updates", in: metrics) == 0
        }
        #expect(HTTPEndpointTests.sample("receiptd_updates_dropped_total", in: metrics) == Double(dropped))
        _ = try await daemon.ingest([
            events.make(.messageSent(conversation: conversation, message: "final", sender: "ann", isSystem: false))
        ])

        // On the wire: increasing sequences with gaps, 2 (m1) to 302 (final).
        let sequences = try wire.updates { $0.status.message == "final" }.map(\.sequence)
        #expect(sequences.last == 302)
        #expect(zip(sequences, sequences.dropFirst()).allSatisfy { $0 < $1 }, "\(sequences)")
        #expect(sequences.count == 302 - Int(dropped), "every update not dropped arrived")

        // The subscription repaired the gaps from a snapshot and shows what a snapshot shows.
        try await Self.waitUntil("the subscription shows final") { shown.withLock { $0["final"] != nil } }
        let snapshot = try await client.snapshot(of: conversation).snapshot.messages
        #expect(snapshot.count == 302)
        let view = shown.withLock { $0 }
        for status in snapshot {
            #expect(view[status.message] == status, "\(status.message)")
        }
        #expect(client.currentStatistics.snapshotRepairs > repairsBefore)
    }

    /// Polls `condition` every 10 ms until it holds; throws after 20 seconds.
    private static func waitUntil(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(20)
        while try await !condition() {
            guard ContinuousClock.now < deadline else { throw IntegrationError("\(what): not within 20 s") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
