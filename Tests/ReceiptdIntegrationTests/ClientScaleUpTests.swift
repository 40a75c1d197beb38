import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// A client still routing by two workers while three real workers (started with
/// `--worker-count 3`) share the conversations, as during a scale-up before the gateways are
/// configured with the new count: what worker 2 owns is reached through NOT_OWNER redirects,
/// for events, typed queries and subscriptions. Both ways of naming the workers are tried: a
/// list longer than the routing count, and `{index}` templates that resolve ordinal 2 only
/// when a redirect names it.
@Suite(.serialized, .startsProcesses)
struct ClientScaleUpTests {
    private static let members = ["a", "b", "c"]

    /// Three workers of a three-worker cluster, and a client that routes by two.
    private struct Setup {
        let workers: WorkerCluster
        let client: ReceiptsClient

        init(templated: Bool) async throws {
            workers = try await WorkerCluster(count: 3, inOneDirectory: true)
            let templates = workers
            client = try workers.client(routingCount: 2) { configuration in
                if templated {
                    configuration.cluster = Cluster(
                        workerCount: 2,
                        ingest: templates.endpointTemplates.ingest,
                        query: templates.endpointTemplates.query,
                        publish: templates.endpointTemplates.publish
                    )
                }
            }
        }

        /// The owner in the three-worker cluster.
        func owner(of conversation: String) -> Int {
            Partitioning.owner(of: conversation, workerCount: 3)
        }

        func finish() async {
            await client.shutdown()
        }
    }

    /// Conversations of which at least a few are owned by worker 2 of three.
    private static func conversations(_ prefix: String) -> [String] {
        (0..<30).map { "\(prefix)-\($0)" }
    }

    @Test(arguments: [false, true])
    func eventsForANewWorkerArriveThroughARedirectExactlyOnce(templated: Bool) async throws {
        let setup = try await Setup(templated: templated)
        let client = setup.client
        let conversations = Self.conversations("up")
        let movedCount = conversations.filter { setup.owner(of: $0) == 2 }.count
        #expect(movedCount >= 3, "30 conversations should give worker 2 a few")
        for conversation in conversations {
            // Jump hashing moves a conversation only to the new ordinal, never between old ones.
            let routed = client.owner(of: conversation)
            #expect(routed < 2 && (setup.owner(of: conversation) == 2 || setup.owner(of: conversation) == routed))
        }

        var events: [EventKind] = []
        for conversation in conversations {
            events.append(.conversationUpserted(conversation: conversation, kind: .group, members: Self.members))
            events.append(.messageSent(conversation: conversation, message: "m1", sender: "a", isSystem: false))
            events.append(.delivered(conversation: conversation, user: "b", message: "m1"))
            events.append(.read(conversation: conversation, user: "b", message: "m1"))
        }
        let batch = events
        let outcomes = try await within(30, "the send") { try await client.send(batch) }
        #expect(outcomes == Array(repeating: .accepted(held: false), count: events.count))
        // A user-wide event goes to every listed worker, the one above the routing count too
        // (a templated cluster lists only the routing count's).
        #expect(try await client.send(.receiptPrivacy(user: "b", shareReads: true)) == .accepted(held: false))
        #expect(client.currentStatistics.redirects == movedCount * 4)

        for worker in 0..<3 {
            let counters = try await client.stats(worker: worker)
            let accepted = counters.first { $0.name == "receiptd.events.accepted" }?.value ?? 0
            let duplicates = counters.first { $0.name == "receiptd.events.duplicate" }?.value ?? 0
            let owned = conversations.filter { setup.owner(of: $0) == worker }.count
            let userWide: UInt64 = templated && worker == 2 ? 0 : 1
            #expect(accepted == UInt64(owned * 4) + userWide, "worker \(worker)")
            #expect(duplicates == 0, "worker \(worker)")
        }
        for conversation in conversations where setup.owner(of: conversation) == 2 {
            let messages = try await client.query(.snapshot(conversation: conversation, limit: 0), worker: 2)
            guard case .snapshot(let snapshot, _, _) = messages else {
                Issue.record("worker 2 does not have \(conversation): \(messages)")
                continue
            }
            #expect(snapshot.messages.map(\.message) == ["m1"])
        }
        await setup.finish()
    }

    @Test(arguments: [false, true])
    func typedQueriesFollowNotOwnerToTheNewWorker(templated: Bool) async throws {
        let setup = try await Setup(templated: templated)
        let client = setup.client
        let moved = try #require(Self.conversations("query").first { setup.owner(of: $0) == 2 })
        _ = try await client.send([
            .conversationUpserted(conversation: moved, kind: .group, members: Self.members),
            .messageSent(conversation: moved, message: "m1", sender: "a", isSystem: false),
            .read(conversation: moved, user: "b", message: "m1"),
            .read(conversation: moved, user: "c", message: "m1"),
        ])
        let routed = client.owner(of: moved)
        let direct = try await client.query(.snapshot(conversation: moved, limit: 0), worker: routed)
        guard case .error(let error) = direct else {
            Issue.record("worker \(routed) answered for \(moved), owned by worker 2: \(direct)")
            await setup.finish()
            return
        }
        #expect(error.code == .notOwner && error.ownerWorker == 2)

        let before = client.currentStatistics.queryRedirects
        let viewed = try await client.status(of: "m1", in: moved, viewer: Viewer(user: "a"))
        #expect(viewed.status.status == .readByAll)
        #expect(viewed.displayText == "Read by all users")
        #expect(try await client.readDetail(of: "m1", in: moved).read.count == 2)
        #expect(try await client.lastSent(in: moved, viewer: Viewer(user: "a")).status.message == "m1")
        #expect(try await client.snapshot(of: moved).snapshot.messages.count == 1)
        #expect(client.currentStatistics.queryRedirects == before + 4)
        await setup.finish()
    }

    @Test(arguments: [false, true])
    func aSubscriptionHearsTheNewWorkerAndRepairsFromIt(templated: Bool) async throws {
        let setup = try await Setup(templated: templated)
        let client = setup.client
        let moved = try #require(Self.conversations("sub").first { setup.owner(of: $0) == 2 })
        _ = try await client.send([
            .conversationUpserted(conversation: moved, kind: .group, members: Self.members),
            .messageSent(conversation: moved, message: "m1", sender: "a", isSystem: false),
        ])
        let updates = client.subscribe(to: .conversation(moved))
        // Time for the subscription's first snapshot (redirected to worker 2) and its SUB sockets.
        try await Task.sleep(for: .milliseconds(500))
        _ = try await client.send([
            .delivered(conversation: moved, user: "b", message: "m1"),
            .delivered(conversation: moved, user: "c", message: "m1"),
            .read(conversation: moved, user: "b", message: "m1"),
            .read(conversation: moved, user: "c", message: "m1"),
        ])
        let seen = try await within(20, "worker 2's updates") { () -> [StatusUpdate] in
            var seen: [StatusUpdate] = []
            for await update in updates {
                seen.append(update)
                if update.status.status == .readByAll { break }
            }
            return seen
        }
        #expect(seen.first?.status.message == "m1")
        #expect(seen.last?.status.status == .readByAll)
        #expect(seen.last?.status.readCount == 2)
        let statistics = client.currentStatistics
        #expect(statistics.queryRedirects >= 1, "the snapshot repair must have followed NOT_OWNER: \(statistics)")
        await setup.finish()
    }
}
