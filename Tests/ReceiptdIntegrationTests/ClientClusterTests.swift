import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsWire
import Synchronization
import Testing

/// `ReceiptsClient` against several real workers: routing, retries across a crash, a paused
/// worker, backpressure and cancellation.
@Suite(.serialized)
struct ClientClusterTests {
    private static let members = ["a", "b", "c"]

    private static func upsert(_ conversation: String) -> EventKind {
        .conversationUpserted(conversation: conversation, kind: .group, members: members)
    }

    private static func message(_ conversation: String, _ message: String) -> EventKind {
        .messageSent(conversation: conversation, message: message, sender: "a", isSystem: false)
    }

    @Test(arguments: [2, 3])
    func eventsReachTheirOwners(workerCount: Int) async throws {
        let cluster = try WorkerCluster(count: workerCount)
        let client = try cluster.client()
        let conversations = (0..<40).map { "route-\($0)" }
        let owners = Set(conversations.map(client.owner(of:)))
        #expect(owners.count == workerCount, "40 conversations should spread over every worker")

        let upserted = try await client.send(conversations.map(Self.upsert))
        #expect(upserted.allSatisfy { $0 == .accepted(held: false) })
        try await withThrowingTaskGroup(of: [EventOutcome].self) { group in
            for conversation in conversations {
                group.addTask {
                    var outcomes = [try await client.send(Self.message(conversation, "m1"))]
                    for user in ["b", "c"] {
                        outcomes.append(
                            try await client.send(.delivered(conversation: conversation, user: user, message: "m1"))
                        )
                        outcomes.append(
                            try await client.send(.read(conversation: conversation, user: user, message: "m1"))
                        )
                    }
                    return outcomes
                }
            }
            for try await outcomes in group {
                #expect(outcomes.allSatisfy { $0 == .accepted(held: false) })
            }
        }

        for conversation in conversations {
            let viewed = try await client.status(of: "m1", in: conversation, viewer: Viewer(user: "a"))
            #expect(viewed.status.status == .readByAll)
            #expect(viewed.displayText == "Read by all users")
            let owner = client.owner(of: conversation)
            for other in 0..<workerCount where other != owner {
                let reply = try await client.query(.snapshot(conversation: conversation, limit: 0), worker: other)
                guard case .error(let error) = reply else {
                    Issue.record("worker \(other) answered for \(conversation), owned by \(owner): \(reply)")
                    continue
                }
                #expect(error.code == .notOwner && error.ownerWorker == owner)
            }
        }
        // A user-wide event goes to every worker, and each applies it.
        #expect(try await client.send(.receiptPrivacy(user: "b", shareReads: true)) == .accepted(held: false))
        for worker in 0..<workerCount {
            let accepted = try await client.stats(worker: worker).first { $0.name == "receiptd.events.accepted" }
            let owned = conversations.filter { client.owner(of: $0) == worker }.count
            #expect(accepted?.value == UInt64(owned * 6 + 1), "worker \(worker)")
        }
        await client.shutdown()
    }

    /// A worker is SIGKILLed (with frames in flight to it) and restarted while many callers
    /// stream one event per `send`: every send returns without an error, and each message is in
    /// its owner's state exactly once.
    @Test func sigkillMidStreamLosesNothingAndAppliesNothingTwice() async throws {
        let cluster = try WorkerCluster(count: 2)
        let client = try cluster.client()
        let conversations = (0..<16).map { "crash-\($0)" }
        _ = try await client.send(conversations.map(Self.upsert))
        let victim = cluster.workers[1]
        #expect(conversations.contains { client.owner(of: $0) == 1 })

        let acknowledged = AcknowledgedCount()
        let perCaller = 60
        let stream = Task {
            try await withThrowingTaskGroup(of: [EventOutcome].self) { group in
                for caller in 0..<32 {
                    group.addTask {
                        var outcomes: [EventOutcome] = []
                        for index in 0..<perCaller {
                            let conversation = conversations[(caller + index) % conversations.count]
                            outcomes.append(try await client.send(Self.message(conversation, "m\(caller)-\(index)")))
                            acknowledged.value.add(1, ordering: .relaxed)
                        }
                        return outcomes
                    }
                }
                var all: [EventOutcome] = []
                for try await outcomes in group { all += outcomes }
                return all
            }
        }
        let deadline = Date().addingTimeInterval(30)
        while acknowledged.value.load(ordering: .relaxed) < 32 * perCaller / 3, Date() < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        // Paused first, so frames to it are surely in flight, unacknowledged, when it dies.
        victim.signal(SIGSTOP)
        try await Task.sleep(for: .milliseconds(100))
        victim.kill9()
        let atKill = acknowledged.value.load(ordering: .relaxed)
        try await Task.sleep(for: .milliseconds(300))
        try victim.start()
        let outcomes = try await within(60, "the stream") { try await stream.value }
        #expect(atKill < 32 * perCaller, "the kill must land while the stream runs")
        #expect(client.currentStatistics.framesResent > 0, "frames lost with the worker must have been re-sent")
        print("sigkill test: \(atKill) of \(32 * perCaller) acknowledged at the kill; \(client.currentStatistics)")

        #expect(outcomes.count == 32 * perCaller)
        #expect(
            outcomes.allSatisfy { $0 == .accepted(held: false) || $0 == .duplicate },
            "\(outcomes.filter { $0 != .accepted(held: false) && $0 != .duplicate }.prefix(3))"
        )
        var expected: [String: Set<String>] = [:]
        for caller in 0..<32 {
            for index in 0..<perCaller {
                expected[conversations[(caller + index) % conversations.count], default: []].insert(
                    "m\(caller)-\(index)"
                )
            }
        }
        for conversation in conversations {
            let messages = try await client.snapshot(of: conversation).snapshot.messages
            #expect(Set(messages.map(\.message)) == expected[conversation], "\(conversation)")
            #expect(messages.count == expected[conversation]?.count, "\(conversation) has a message twice")
            #expect(Set(messages.map(\.sequence)).count == messages.count)
        }
        await client.shutdown()
    }

    /// A paused worker (SIGSTOP) leaves a frame unacknowledged past the timeout: the client sends
    /// it again with the same ids, and when the worker resumes it sees both copies, applies the
    /// events once and the caller gets each outcome once.
    @Test func unacknowledgedFrameIsResentWithTheSameIds() async throws {
        let cluster = try WorkerCluster(count: 1)
        let client = try cluster.client { $0.acknowledgementTimeoutMilliseconds = 200 }
        _ = try await client.send([Self.upsert("pause")])
        let worker = cluster.workers[0]
        worker.signal(SIGSTOP)
        let sending = Task { try await client.send((0..<10).map { Self.message("pause", "m\($0)") }) }
        try await Task.sleep(for: .milliseconds(700))
        worker.signal(SIGCONT)
        let outcomes = try await within(10, "the send") { try await sending.value }

        #expect(outcomes == Array(repeating: .accepted(held: false), count: 10))
        #expect(client.currentStatistics.framesResent >= 1)
        #expect(try await client.snapshot(of: "pause").snapshot.messages.count == 10)
        let duplicates = try await client.stats(worker: 0).first { $0.name == "receiptd.events.duplicate" }
        #expect((duplicates?.value ?? 0) >= 10, "the re-sent copy must have been answered as duplicates")
        await client.shutdown()
    }

    /// A gateway takes events into its outbox while the worker cannot answer, and stops before
    /// they are answered; started again on the same outbox, it delivers them, each applied once.
    @Test func outboxDeliversWhatAGatewayTookInBeforeItsRestart() async throws {
        let cluster = try WorkerCluster(count: 1)
        var outboxDirectory = Array("/tmp/rdob-XXXXXX".utf8CString)
        guard let made = mkdtemp(&outboxDirectory) else { throw IntegrationError("mkdtemp failed") }
        let path = String(cString: made)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let configure: (inout ReceiptsClient.Configuration) -> Void = { $0.outboxDirectory = path }

        let first = try cluster.client(source: "outbox-gw", configure)
        _ = try await first.send([Self.upsert("offline")])
        let worker = cluster.workers[0]
        worker.signal(SIGSTOP)
        var ids: [EventID] = []
        for index in 0..<50 { ids += try await first.enqueue([Self.message("offline", "m\(index)")]) }
        #expect(first.unansweredInOutbox == 50)
        await first.shutdown()

        worker.signal(SIGCONT)
        let second = try cluster.client(source: "outbox-gw", configure)
        #expect(second.nextSequence > ids.map(\.sequence).max() ?? 0, "the outbox keeps the sequence")
        try await within(10, "the outbox's delivery") { try await second.flush() }
        #expect(second.unansweredInOutbox == 0)
        let messages = try await second.snapshot(of: "offline").snapshot.messages
        #expect(messages.map(\.message).sorted() == (0..<50).map { "m\($0)" }.sorted())
        await second.shutdown()
    }

    /// A `flush` waiting on a worker that cannot answer stops waiting when its task is
    /// cancelled; the events still arrive once the worker is back.
    @Test func cancelledFlushReturns() async throws {
        let cluster = try WorkerCluster(count: 1)
        let client = try cluster.client()
        _ = try await client.send([Self.upsert("flush")])
        let worker = cluster.workers[0]
        worker.signal(SIGSTOP)
        let sending = Task { try await client.send(Self.message("flush", "m1")) }
        let flushing = Task { try await client.flush() }
        try await Task.sleep(for: .milliseconds(200))
        flushing.cancel()
        let flushed = try await within(5, "the cancelled flush") { await flushing.result }
        worker.signal(SIGCONT)
        guard case .failure(let error as ReceiptsClientError) = flushed else {
            Issue.record("a cancelled flush returned \(flushed)")
            return
        }
        #expect(error.code == .cancelled)
        #expect(try await within(10, "the send") { try await sending.value } == .accepted(held: false))
        await client.shutdown()
    }

    /// With the queues full, callers wait instead of anything being dropped; a cancelled
    /// caller stops waiting at once, and the others complete when the worker is back.
    @Test func backpressureWaitsAndCancellationStopsWaiting() async throws {
        let cluster = try WorkerCluster(count: 1)
        let client = try cluster.client {
            $0.maxQueuedEvents = 4
            $0.maxFramesInFlight = 1
            $0.maxBatchEvents = 2
        }
        _ = try await client.send([Self.upsert("full")])
        let worker = cluster.workers[0]
        worker.signal(SIGSTOP)
        let waiting = (0..<20).map { index in
            Task { try await client.send(Self.message("full", "m\(index)")) }
        }
        let cancelled = Task { try await client.send(Self.message("full", "cancelled")) }
        try await Task.sleep(for: .milliseconds(300))
        cancelled.cancel()
        let cancellation = try await within(5, "the cancelled send") { await cancelled.result }
        guard case .failure(let error as ReceiptsClientError) = cancellation else {
            Issue.record("a cancelled send returned \(cancellation)")
            worker.signal(SIGCONT)
            return
        }
        #expect(error.code == .cancelled)
        worker.signal(SIGCONT)
        for task in waiting {
            let outcome = try await within(10, "a waiting send") { try await task.value }
            #expect(outcome == .accepted(held: false))
        }
        #expect(try await client.snapshot(of: "full").snapshot.messages.count >= 20)
        await client.shutdown()
    }
}

/// How many sends have returned so far, shared by the streaming tasks and the test.
private final class AcknowledgedCount: Sendable {
    let value = Atomic<Int>(0)
}
