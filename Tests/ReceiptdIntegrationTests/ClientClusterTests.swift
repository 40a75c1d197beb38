import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Synchronization
import Testing

/// `ReceiptsClient` against several real workers: routing, retries across a crash, a paused
/// worker, backpressure and cancellation.
@Suite(.serialized, .startsProcesses)
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
        let cluster = try await WorkerCluster(count: workerCount)
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
        let cluster = try await WorkerCluster(count: 2)
        let client = try cluster.client()
        let conversations = (0..<16).map { "crash-\($0)" }
        _ = try await client.send(conversations.map(Self.upsert))
        let victim = cluster.workers[1]
        #expect(conversations.contains { client.owner(of: $0) == 1 })

        let acknowledged = AcknowledgedCount()
        let perCaller = 60
        let stream = Task.onOwnThread {
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
        try await victim.start()
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
        try await Self.expectEachMessageOnce(expected, in: conversations, client)
        await client.shutdown()
    }

    /// Killing one of two workers pauses only its own conversations. A publisher streams to
    /// conversations of both; while worker 1 is down (SIGKILL), worker 0's events keep being
    /// acknowledged and worker 0 answers queries, and none of worker 1's is acknowledged (the
    /// client re-sends them meanwhile); restarted on the same data directory, worker 1 takes its
    /// conversations back, and every acknowledged event is in its owner's state exactly once.
    ///
    /// Unlike `sigkillMidStreamLosesNothingAndAppliesNothingTwice`, whose callers each write to
    /// both workers (so one stalled worker stalls them all), each caller here writes to one
    /// worker's conversations only, as independent gateway traffic does.
    @Test func killedWorkerPausesOnlyItsConversations() async throws {
        let cluster = try await WorkerCluster(count: 2)
        let client = try cluster.client()
        let conversations = (0..<16).map { "isolate-\($0)" }
        let owned = (0..<2).map { worker in conversations.filter { client.owner(of: $0) == worker } }
        try #require(owned.allSatisfy { !$0.isEmpty }, "16 conversations should spread over both workers")
        _ = try await client.send(conversations.map(Self.upsert))

        let progress = StreamProgress()
        // A bound on the count: the stream ends at `progress.stop()`, long before. Each caller
        // pauses 1 ms between sends, so no machine is fast enough to reach the bound first.
        let maxPerCaller = 20_000
        let stream = Task.onOwnThread {
            try await withThrowingTaskGroup(of: [(String, String, EventOutcome)].self) { group in
                for worker in 0..<2 {
                    for caller in 0..<4 {
                        group.addTask {
                            var sent: [(String, String, EventOutcome)] = []
                            for index in 0..<maxPerCaller {
                                if progress.stopped { break }
                                let conversation = owned[worker][(caller + index) % owned[worker].count]
                                let message = "m\(worker)-\(caller)-\(index)"
                                sent.append(
                                    (conversation, message, try await client.send(Self.message(conversation, message)))
                                )
                                progress.acknowledged(by: worker)
                                try await Task.sleep(for: .milliseconds(1))
                            }
                            return sent
                        }
                    }
                }
                var all: [(String, String, EventOutcome)] = []
                for try await sent in group { all += sent }
                return all
            }
        }
        defer { stream.cancel() }
        try #require(
            try await progress.wait(seconds: 20) { $0[0] >= 200 && $0[1] >= 200 },
            "both workers acknowledge before the kill: \(progress.counts)"
        )

        // Paused first so that frames to it are in flight when it dies; a reply it sent before
        // the pause has been read (and counted) before the count is taken.
        let victim = cluster.workers[1]
        victim.signal(SIGSTOP)
        try await Task.sleep(for: .milliseconds(200))
        victim.kill9()
        try await Task.sleep(for: .milliseconds(100))
        let atKill = progress.counts

        // Worker 0 keeps acknowledging and answering, twice over: right after the kill, and
        // again after a query to worker 1 has timed out (2 s, four acknowledgement timeouts).
        #expect(
            try await progress.wait(seconds: 10) { $0[0] >= atKill[0] + 200 },
            "worker 0 stalled while worker 1 was down: \(atKill) at the kill, \(progress.counts) now"
        )
        for conversation in owned[0] {
            let snapshot = try await within(5, "a snapshot from worker 0") {
                try await client.snapshot(of: conversation).snapshot
            }
            #expect(!snapshot.messages.isEmpty, "\(conversation)")
        }
        #expect(try await within(5, "worker 0's health") { try await client.health(worker: 0) }.workerIndex == 0)
        await #expect(throws: ReceiptsClientError.self, "a dead worker cannot answer") {
            try await client.health(worker: 1)
        }
        let beforeRestart = progress.counts
        #expect(
            try await progress.wait(seconds: 10) { $0[0] >= beforeRestart[0] + 200 },
            "worker 0 stalled while worker 1 was down: \(beforeRestart) then \(progress.counts)"
        )
        #expect(progress.counts[1] == atKill[1], "worker 1's events were acknowledged while it was down")
        #expect(client.currentStatistics.framesResent > 0, "frames to the dead worker are re-sent meanwhile")

        try await victim.start()
        let atRestart = progress.counts
        #expect(
            try await progress.wait(seconds: 20) { $0[1] >= atRestart[1] + 200 },
            "worker 1's conversations did not resume: \(atRestart) at the restart, \(progress.counts) now"
        )
        progress.stop()
        let sent = try await within(60, "the stream") { try await stream.value }
        print(
            "isolation test: acknowledged \(atKill) at the kill, \(beforeRestart) before the restart, "
                + "\(progress.counts) in all; \(client.currentStatistics)"
        )

        #expect(sent.count == progress.counts.reduce(0, +))
        let refused = sent.filter { $0.2 != .accepted(held: false) && $0.2 != .duplicate }
        #expect(refused.isEmpty, "\(refused.prefix(3))")
        var expected: [String: Set<String>] = [:]
        for (conversation, message, _) in sent { expected[conversation, default: []].insert(message) }
        try await Self.expectEachMessageOnce(expected, in: conversations, client)
        await client.shutdown()
    }

    /// Each conversation's snapshot holds exactly its `expected` messages (none lost), each once
    /// (none applied twice).
    private static func expectEachMessageOnce(
        _ expected: [String: Set<String>],
        in conversations: [String],
        _ client: ReceiptsClient
    ) async throws {
        for conversation in conversations {
            let messages = try await client.snapshot(of: conversation).snapshot.messages
            #expect(Set(messages.map(\.message)) == expected[conversation, default: []], "\(conversation)")
            #expect(messages.count == expected[conversation, default: []].count, "\(conversation) has a message twice")
            #expect(Set(messages.map(\.sequence)).count == messages.count)
        }
    }

    /// A paused worker (SIGSTOP) leaves a frame unacknowledged past the timeout: the client sends
    /// it again with the same ids, and when the worker resumes it sees both copies, applies the
    /// events once and the caller gets each outcome once.
    @Test func unacknowledgedFrameIsResentWithTheSameIds() async throws {
        let cluster = try await WorkerCluster(count: 1)
        let client = try cluster.client { $0.acknowledgementTimeoutMilliseconds = 200 }
        _ = try await client.send([Self.upsert("pause")])
        let worker = cluster.workers[0]
        worker.signal(SIGSTOP)
        let framesBefore = client.currentStatistics.framesSent
        let sending = Task.onOwnThread { try await client.send((0..<10).map { Self.message("pause", "m\($0)") }) }
        // Paused for longer than the acknowledgement timeout from the frame's first sending on.
        for _ in 0..<500 where client.currentStatistics.framesSent == framesBefore {
            try await Task.sleep(for: .milliseconds(10))
        }
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
        let cluster = try await WorkerCluster(count: 1)
        let path = try TemporaryDirectory.make(prefix: "rdob")
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
        let cluster = try await WorkerCluster(count: 1)
        let client = try cluster.client()
        _ = try await client.send([Self.upsert("flush")])
        let worker = cluster.workers[0]
        worker.signal(SIGSTOP)
        let framesBefore = client.currentStatistics.framesSent
        let sending = Task.onOwnThread { try await client.send(Self.message("flush", "m1")) }
        // The flush must find the event in flight (tasks start in any order).
        for _ in 0..<500 where client.currentStatistics.framesSent == framesBefore {
            try await Task.sleep(for: .milliseconds(10))
        }
        let flushing = Task.onOwnThread { try await client.flush() }
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
        let cluster = try await WorkerCluster(count: 1)
        let client = try cluster.client {
            $0.maxQueuedEvents = 4
            $0.maxFramesInFlight = 1
            $0.maxBatchEvents = 2
        }
        _ = try await client.send([Self.upsert("full")])
        let worker = cluster.workers[0]
        worker.signal(SIGSTOP)
        let waiting = (0..<20).map { index in
            Task.onOwnThread { try await client.send(Self.message("full", "m\(index)")) }
        }
        let cancelled = Task.onOwnThread { try await client.send(Self.message("full", "cancelled")) }
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

/// Per worker, how many sends to its conversations have returned; and when to stop sending.
private final class StreamProgress: Sendable {
    private let state = Mutex((counts: [0, 0], stopped: false))

    /// Acknowledged sends, by the ordinal of the worker that owns their conversation.
    var counts: [Int] { state.withLock { $0.counts } }
    var stopped: Bool { state.withLock { $0.stopped } }

    func acknowledged(by worker: Int) {
        state.withLock { $0.counts[worker] += 1 }
    }

    func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Polls `condition` on the counts every 5 ms for up to `seconds`.
    /// - Returns: Whether it came true in time.
    func wait(seconds: Double, until condition: ([Int]) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition(counts) { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return condition(counts)
    }
}
