import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// `ReceiptsClient` following a replicated ordinal's primary (deploy/REPLICATION.md section
/// 8.2): first against scripted members that answer NOT_PRIMARY or nothing, then against two
/// real receiptd members and a real etcd, the primary SIGKILLed while gateways stream events
/// through the client.
@Suite(.serialized, .startsProcesses)
struct ClientFailoverTests {
    private static func message(_ conversation: String, _ message: String) -> EventKind {
        .messageSent(conversation: conversation, message: message, sender: "a", isSystem: false)
    }

    private static func accepting(_ events: [Event], _: Int) -> IngestReply {
        IngestReply(results: Array(repeating: .accepted(held: false), count: events.count))
    }

    /// A standby's answer naming `primary` (by its endpoints and the name `p-0`), or no primary.
    private static func notPrimary(_ primary: ScriptedWorker?) -> ErrorReply {
        ErrorReply(
            code: .notPrimary,
            message: "this member is a standby",
            primary: primary.map {
                ErrorReply.Primary(
                    member: "p-0",
                    ingest: $0.endpoints.ingest,
                    query: $0.endpoints.query,
                    publish: $0.endpoints.publish
                )
            },
            term: 2
        )
    }

    /// A client of one ordinal served by `members`, in that order.
    private static func client(
        _ members: [Cluster.Worker],
        _ adjust: (inout ReceiptsClient.Configuration) -> Void = { _ in }
    ) throws -> ReceiptsClient {
        var configuration = ReceiptsClient.Configuration(cluster: Cluster(members: [members]))
        configuration.acknowledgementTimeoutMilliseconds = 2000
        configuration.queryTimeoutMilliseconds = 5000
        adjust(&configuration)
        return try ReceiptsClient(configuration, logger: Logger(label: "test-client"))
    }

    /// A gateway task: upserts a group conversation, then sends `batches` batches of a message,
    /// its delivery to bob and its read by cat.
    /// - Parameter halfway: After how many batches to say so, and where.
    /// - Returns: What went wrong: an error thrown by `send`, or an event rejected.
    private static func stream(
        through client: ReceiptsClient,
        conversation: String,
        batches: Int,
        halfway: (batches: Int, signal: AsyncStream<Void>.Continuation)?
    ) async -> [String] {
        var failures: [String] = []
        do {
            _ = try await client.send(
                .conversationUpserted(conversation: conversation, kind: .group, members: ["ann", "bob", "cat"])
            )
        } catch {
            failures.append("\(conversation): \(error)")
        }
        for batch in 0..<batches {
            let message = "m\(batch)"
            do {
                let outcomes = try await client.send([
                    .messageSent(conversation: conversation, message: message, sender: "ann", isSystem: false),
                    .delivered(conversation: conversation, user: "bob", message: message),
                    .read(conversation: conversation, user: "cat", message: message),
                ])
                for case .rejected(let rejection) in outcomes {
                    failures.append("\(conversation)/\(message): \(rejection)")
                }
            } catch {
                failures.append("\(conversation)/\(message): \(error)")
            }
            if let halfway, batch + 1 == halfway.batches { halfway.signal.finish() }
        }
        return failures
    }

    // MARK: - Scripted members

    /// The standby is asked first and names the primary (matched by its endpoints): the events
    /// go there with the same ids, and the caller sees them accepted.
    @Test func aSendFollowsNotPrimaryToTheNamedMemberWithTheSameIDs() async throws {
        let primary = try ScriptedWorker(ingest: Self.accepting)
        let standby = try ScriptedWorker { _, _ in IngestReply(results: [], error: Self.notPrimary(primary)) }
        let client = try Self.client([standby.endpoints, primary.endpoints])
        let outcomes = try await within(10, "the send") {
            try await client.send([Self.message("c", "m1"), Self.message("c", "m2")])
        }
        #expect(outcomes == [.accepted(held: false), .accepted(held: false)])
        #expect(standby.frames.count == 1)
        #expect(primary.frames == standby.frames, "the same event ids")
        // Later sends go straight to the primary.
        _ = try await within(10, "the second send") { try await client.send(Self.message("c", "m3")) }
        #expect(standby.frames.count == 1)
        #expect(primary.frames.count == 2)
        #expect(client.currentStatistics.primarySwitches == 1)
        await client.shutdown()
        standby.stop()
        primary.stop()
    }

    /// A query follows NOT_PRIMARY (here to a member matched by name), and the ingest that
    /// follows goes to the primary the query found.
    @Test func aQueryFollowsNotPrimaryAndIngestFollowsWhatItLearned() async throws {
        let primary = try ScriptedWorker(ingest: Self.accepting) { _, _ in .unreadCounts([]) }
        let standby = try ScriptedWorker(
            ingest: { _, _ in IngestReply(results: [], error: Self.notPrimary(primary)) },
            query: { _, _ in .error(Self.notPrimary(primary)) }
        )
        var named = primary.endpoints
        named.member = "p-0"  // a named member matches by its name only
        let client = try Self.client([standby.endpoints, named])
        let counts = try await within(10, "the query") { try await client.unreadCounts(for: "u", in: ["c"]) }
        #expect(counts.isEmpty)
        _ = try await within(10, "the send") { try await client.send(Self.message("c", "m1")) }
        #expect(standby.frames.isEmpty, "the query found the primary first")
        #expect(primary.frames.count == 1)
        await client.shutdown()
        standby.stop()
        primary.stop()
    }

    /// While an election is under way the standby names no primary: the frame goes to it again
    /// after each pause until it names one, and the send never fails.
    @Test func noPrimaryNamedIsWaitedOutUntilOneIs() async throws {
        let primary = try ScriptedWorker(ingest: Self.accepting)
        let standby = try ScriptedWorker { _, index in
            IngestReply(results: [], error: Self.notPrimary(index < 3 ? nil : primary))
        }
        let client = try Self.client([standby.endpoints, primary.endpoints]) {
            $0.unavailableBackoffMilliseconds = 100
        }
        let started = ContinuousClock.now
        let outcome = try await within(10, "the send") { try await client.send(Self.message("c", "m1")) }
        #expect(outcome == .accepted(held: false))
        #expect(ContinuousClock.now - started >= .milliseconds(300), "three pauses")
        #expect(standby.frames.count == 4)
        #expect(Set(standby.frames + primary.frames).count == 1, "every attempt carries the same id")
        await client.shutdown()
        standby.stop()
        primary.stop()
    }

    /// The first member never answers (nothing listens on its endpoints): after the
    /// acknowledgement timeout the client leaves it for the next, which acknowledges.
    @Test func aSilentPrimaryIsLeftAfterTheAcknowledgementTimeout() async throws {
        let primary = try ScriptedWorker(ingest: Self.accepting) { _, _ in .unreadCounts([]) }
        let silent = Cluster.Worker(dataDirectory: primary.directory + "/nobody")
        let client = try Self.client([silent, primary.endpoints]) { $0.acknowledgementTimeoutMilliseconds = 300 }
        let started = ContinuousClock.now
        let outcome = try await within(10, "the send") { try await client.send(Self.message("c", "m1")) }
        #expect(outcome == .accepted(held: false))
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(client.currentStatistics.primarySwitches == 1)
        let counts = try await within(10, "the query") { try await client.unreadCounts(for: "u", in: ["c"]) }
        #expect(counts.isEmpty)
        await client.shutdown()
        primary.stop()
    }

    // MARK: - Real members

    /// Three gateway tasks stream batches through one client while the primary is SIGKILLed:
    /// every send returns without an error, every event acknowledged is on the new primary
    /// exactly once, and the stream ends in bounded time.
    @Test func gatewaysStreamThroughAPrimarySIGKILLWithoutAnError() async throws {
        let etcd = try await EtcdProcess()
        let alpha = try await ReceiptdProcess(arguments: FailoverTests.arguments("alpha-0", etcd: etcd))
        let beta = try await ReceiptdProcess(arguments: FailoverTests.arguments("beta-0", etcd: etcd))
        let client = try Self.client([
            Cluster.Worker(dataDirectory: alpha.dataDirectory, member: "alpha-0"),
            Cluster.Worker(dataDirectory: beta.dataDirectory, member: "beta-0"),
        ])
        let tasks = 3
        let batches = 300
        let killAfter = 150
        // Task 0 says when it is halfway; the test kills the primary then.
        let (halfway, reachedHalfway) = AsyncStream.makeStream(of: Void.self)
        let streaming = Task.onOwnThread {
            await withTaskGroup(of: [String].self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        await Self.stream(
                            through: client,
                            conversation: "c\(task)",
                            batches: batches,
                            halfway: task == 0 ? (killAfter, reachedHalfway) : nil
                        )
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
        }
        for await _ in halfway { break }
        alpha.kill9()
        let failures = try await within(30, "the stream after the kill") { await streaming.value }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        #expect(client.currentStatistics.primarySwitches >= 1)

        // Every message on the new primary, each receipt applied once.
        // The client talks to the new primary now (a primary's health names no role yet).
        let health = try await client.health(worker: 0)
        #expect(health.state == "serving" && health.role != .standby, "\(health)")
        for task in 0..<tasks {
            let conversation = "c\(task)"
            let unread = try await client.unreadCounts(for: "bob", in: [conversation])
            #expect(unread.map(\.unread) == [batches], "\(conversation): \(unread)")
            for batch in 0..<batches {
                let status = try await client.status(of: "m\(batch)", in: conversation, viewer: Viewer(user: "ann"))
                #expect(
                    status.status.readCount == 1 && status.status.deliveredCount == 2,
                    "\(conversation)/m\(batch): \(status.status)"
                )
            }
        }
        await client.shutdown()
        beta.kill9()
        etcd.stop()
    }

    /// A subscriber's own client listens to both members: after the SIGKILL the new primary's
    /// updates (a new publisher run) are repaired from its snapshot, and the subscriber ends
    /// with what a fresh snapshot shows.
    @Test func aSubscriberAcrossTheFailoverEndsEqualToAFreshSnapshot() async throws {
        let etcd = try await EtcdProcess()
        let alpha = try await ReceiptdProcess(arguments: FailoverTests.arguments("alpha-0", etcd: etcd))
        let beta = try await ReceiptdProcess(arguments: FailoverTests.arguments("beta-0", etcd: etcd))
        let members = [
            Cluster.Worker(dataDirectory: alpha.dataDirectory, member: "alpha-0"),
            Cluster.Worker(dataDirectory: beta.dataDirectory, member: "beta-0"),
        ]
        let client = try Self.client(members)
        let subscriber = try Self.client(members)
        let conversation = "followed"
        _ = try await client.send(
            .conversationUpserted(conversation: conversation, kind: .group, members: ["ann", "bob", "cat"])
        )
        // Updates wait in the subscription's buffer while the events go out.
        let updates = subscriber.subscribe(to: .conversation(conversation))
        @Sendable func send(_ messages: Range<Int>, read: Bool) async throws {
            for index in messages {
                let message = "m\(index)"
                var events: [EventKind] = [
                    .messageSent(conversation: conversation, message: message, sender: "ann", isSystem: false),
                    .delivered(conversation: conversation, user: "bob", message: message),
                ]
                if read { events.append(.read(conversation: conversation, user: "cat", message: message)) }
                _ = try await client.send(events)
            }
        }
        try await send(0..<50, read: false)
        alpha.kill9()
        try await within(30, "the sends across the failover") { try await send(50..<100, read: true) }

        let snapshot = try await client.snapshot(of: conversation).snapshot
        let fresh = Dictionary(uniqueKeysWithValues: snapshot.messages.map { ($0.message, $0) })
        #expect(fresh.count == 100)
        let seen = try await within(20, "the subscriber catching up") {
            var latest: [String: MessageStatus] = [:]
            for await update in updates {
                latest[update.status.message] = update.status
                if latest == fresh { break }
            }
            return latest
        }
        #expect(seen == fresh, "the subscriber's view differs from the new primary's snapshot")
        #expect(subscriber.currentStatistics.snapshotRepairs >= 2, "the new publisher run was repaired")
        await subscriber.shutdown()
        await client.shutdown()
        beta.kill9()
        etcd.stop()
    }
}
