import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import Testing

/// Events a client numbers reach each worker in the order they were numbered, so none falls
/// behind receiptd's anti-replay window (4096 per source) and is taken for a replay.
@Suite(.serialized, .startsProcesses)
struct ClientOrderingTests {
    private static func upsert(_ conversation: String) -> EventKind {
        .conversationUpserted(conversation: conversation, kind: .group, members: ["a", "b"])
    }

    private static func message(_ conversation: String, _ message: String) -> EventKind {
        .messageSent(conversation: conversation, message: message, sender: "a", isSystem: false)
    }

    /// A client on the cluster, with an outbox in a fresh directory if asked; `body` runs with it.
    private static func withClient(
        _ cluster: WorkerCluster,
        outbox: Bool,
        _ body: (ReceiptsClient) async throws -> Void
    ) async throws {
        let path = try TemporaryDirectory.make(prefix: "rdob")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let client = try cluster.client { if outbox { $0.outboxDirectory = path } }
        try await body(client)
        await client.shutdown()
    }

    /// The events every worker applied, summed.
    private static func acceptedEvents(_ client: ReceiptsClient, workerCount: Int) async throws -> UInt64 {
        var accepted: UInt64 = 0
        for worker in 0..<workerCount {
            let counters = try await client.stats(worker: worker)
            accepted += counters.first { $0.name == "receiptd.events.accepted" }?.value ?? 0
        }
        return accepted
    }

    /// A caller whose event was numbered is held (its executor runs nothing more, as a busy
    /// thread pool might) while another caller sends more than the anti-replay window; once let
    /// go, its event is still applied.
    @Test(arguments: [false, true])
    func heldCallerIsNotOvertakenByLaterNumbers(outbox: Bool) async throws {
        let cluster = try await WorkerCluster(count: 1)
        try await Self.withClient(cluster, outbox: outbox) { client in
            _ = try await client.send(Self.upsert("held"))
            let numbered = client.nextSequence
            let gate = GatedExecutor(permits: 1)
            let held = Task(executorPreference: gate) { try await client.send(Self.message("held", "first")) }
            try await within(10, "numbering the held send") {
                while client.nextSequence == numbered { try await Task.sleep(for: .milliseconds(1)) }
            }
            let later = try await client.send((0..<6000).map { Self.message("held", "m\($0)") })
            #expect(later.allSatisfy { $0 == .accepted(held: false) })
            gate.open()
            let outcome = try await within(10, "the held send") { try await held.value }
            #expect(outcome == .accepted(held: false))
            #expect(try await Self.acceptedEvents(client, workerCount: 1) == 6002)
        }
    }

    /// Many callers at once, each send of a few events numbered by the client, far more events
    /// than the anti-replay window in all: every event is applied, none answered `duplicate`.
    @Test(arguments: [false, true])
    func concurrentCallersAreNeverTakenForReplays(outbox: Bool) async throws {
        let cluster = try await WorkerCluster(count: 2)
        let callers = 64
        let sendsPerCaller = 300
        let conversations = (0..<32).map { "order-\($0)" }
        try await Self.withClient(cluster, outbox: outbox) { client in
            _ = try await client.send(conversations.map(Self.upsert))
            let sent = try await within(60, "the concurrent sends") {
                try await withThrowingTaskGroup(of: (events: Int, bad: [EventOutcome]).self) { group in
                    for caller in 0..<callers {
                        group.addTask {
                            var events = 0
                            var bad: [EventOutcome] = []
                            for index in 0..<sendsPerCaller {
                                let conversation = conversations[(caller + index) % conversations.count]
                                // Every tenth send is larger, so callers' numbers spread further apart.
                                let size = index % 10 == 0 ? 40 : 1
                                let outcomes = try await client.send(
                                    (0..<size).map { Self.message(conversation, "m\(caller)-\(index)-\($0)") }
                                )
                                events += size
                                bad += outcomes.filter { $0 != .accepted(held: false) }
                            }
                            return (events, bad)
                        }
                    }
                    var total = (events: 0, bad: [EventOutcome]())
                    for try await result in group {
                        total.events += result.events
                        total.bad += result.bad
                    }
                    return total
                }
            }
            #expect(sent.bad.isEmpty, "\(sent.bad.count) events not applied, e.g. \(sent.bad.prefix(3))")
            let applied = try await Self.acceptedEvents(client, workerCount: 2)
            #expect(applied == UInt64(conversations.count + sent.events))
        }
    }
}
