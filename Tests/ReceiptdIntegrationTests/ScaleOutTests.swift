import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Synchronization
import Testing

/// Changing the worker count of real workers with `receiptctl rebalance` while a gateway
/// streams events (deploy/SCALING.md): nothing acknowledged is lost, nothing is applied twice,
/// every conversation ends with one owner and the state of a run that moved nothing.
@Suite(.serialized, .startsProcesses)
struct ScaleOutTests {
    static let conversations = (0..<48).map { "scale-\($0)" }
    static let members = ["u1", "u2", "u3"]

    @Test(arguments: [(2, 3), (3, 2)])
    func aWorkerCountChangeUnderLoadLosesNothingAndAppliesNothingTwice(from: Int, to: Int) async throws {
        let workers = try await WorkerCluster(count: from, slots: max(from, to), inOneDirectory: true)
        let client = try workers.client(routingCount: from) { $0.queryTimeoutMilliseconds = 5000 }
        // Gateways already routing by the new count take every other round: what they send to a
        // new owner before its conversations arrive is answered `moving` and sent again.
        let updated = try workers.client(routingCount: to) { $0.queryTimeoutMilliseconds = 5000 }
        // A subscriber that follows a conversation that moves, across the move.
        let followed = try #require(
            Self.conversations.first {
                Partitioning.owner(of: $0, workerCount: from) != Partitioning.owner(of: $0, workerCount: to)
            }
        )
        let updates = Updates(client.subscribe(to: .conversation(followed)))

        let stream = try await LoadStream.start([client, updated], rounds: 3)
        let driver = try await RebalanceProcess.run(
            to: to,
            template: workers.endpointTemplates.query,
            arguments: ["--batch", "1", "--pause-ms", "10"]
        )
        #expect(driver.status == 0, "\(driver.output)")
        let sent = try await stream.finish(rounds: 3)
        try await Self.expectOneOwnerAndUnmovedState(workers, to: to, sent: sent)
        var accepted: UInt64 = 0
        for process in workers.workers { accepted += try await process.counter("receiptd.events.accepted") }
        let events = LoadStream.setUpEvents.count + sent.events.count
        #expect(accepted == UInt64(events), "each acknowledged event applied exactly once")
        // The gateways were sent on to the new owners, and every event answered `moving` (a
        // conversation on its way) was sent again.
        #expect(client.currentStatistics.redirects + updated.currentStatistics.redirects > 0)
        var moving: UInt64 = 0
        for process in workers.workers {
            moving += try await process.counter("receiptd.events.rejected", label: "moving")
        }
        let retried = client.currentStatistics.movingRetries + updated.currentStatistics.movingRetries
        #expect(moving == UInt64(retried), "moving: \(moving) answered, \(retried) sent again")

        // The subscriber saw the new owner's epoch and caught up by snapshot: its last update of
        // the last message is that message's status now.
        let lastMessage = "m\(sent.rounds - 1)"
        let final = try await client.status(of: lastMessage, in: followed, viewer: Viewer(user: "u1"))
        let seen = try await updates.waitFor(seconds: 10) {
            $0.status.message == lastMessage && $0.status.status == final.status.status
        }
        #expect(
            seen,
            "the subscriber of \(followed) did not follow it to worker \(Partitioning.owner(of: followed, workerCount: to))"
        )
        #expect(updates.epochs.count >= 2, "a moved conversation is published under its new owner's epoch")
        await client.shutdown()
        await updated.shutdown()
    }

    /// The steps one at a time, as the driver takes them: while the conversation is frozen, an
    /// event and a query for it wait (answered `MOVING` / `UNAVAILABLE`, asked again), and once
    /// it is released both land at the new owner, the event applied once. A driver run after the
    /// commit reached only one worker commits the other.
    @Test func eventsAndQueriesForAFrozenConversationWaitAndLandAtTheNewOwner() async throws {
        let workers = try await WorkerCluster(count: 1, slots: 2, inOneDirectory: true)
        let client = try workers.client(routingCount: 1) { $0.queryTimeoutMilliseconds = 10_000 }
        let moving = try #require(
            (0..<100).map { "frozen-\($0)" }.first { Partitioning.owner(of: $0, workerCount: 2) == 1 }
        )
        let created = try await client.send([
            .conversationUpserted(conversation: moving, kind: .group, members: Self.members),
            .messageSent(conversation: moving, message: "m1", sender: "u1", isSystem: false),
        ])
        #expect(created == [.accepted(held: false), .accepted(held: false)])

        for worker in 0..<2 { _ = try await client.query(.prepareMove(epoch: 1, from: 1, to: 2), worker: worker) }
        let exported = try await client.query(.exportConversations(epoch: 1, destination: 1, limit: 10), worker: 0)
        guard case .exportResult(let export) = exported else { throw IntegrationError("no export: \(exported)") }
        #expect(export.conversations == [moving] && export.remaining == 0)

        let read = Task.onOwnThread { try await client.send(.read(conversation: moving, user: "u2", message: "m1")) }
        let status = Task.onOwnThread { try await client.status(of: "m1", in: moving, viewer: Viewer(user: "u1")) }
        for _ in 0..<500
        where client.currentStatistics.movingRetries < 2 || client.currentStatistics.queryRetries < 2 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(client.currentStatistics.movingRetries >= 2, "the event waits while the conversation is frozen")
        #expect(client.currentStatistics.queryRetries >= 2, "the query waits while the conversation is frozen")

        let imported = try await client.query(
            .importConversations(epoch: 1, sender: 0, state: export.state, last: true),
            worker: 1
        )
        #expect(imported == .importResult(imported: 1, alreadyHeld: 0))
        _ = try await client.query(
            .releaseConversations(epoch: 1, destination: 1, conversations: [moving]),
            worker: 0
        )

        #expect(try await read.value == .accepted(held: false))
        let answered = try await status.value
        #expect(answered.status.sequence == 1 && answered.status.recipientCount == 2)
        // The driver dies after the first commit; run again, it only commits the rest.
        _ = try await client.query(.commitMove(epoch: 1), worker: 0)
        let driver = try await RebalanceProcess.run(
            to: 2,
            template: workers.endpointTemplates.query,
            arguments: []
        )
        #expect(driver.status == 0 && driver.output.contains("committing on the remaining"), "\(driver.output)")
        for worker in 0..<2 {
            let report = try await Self.topology(of: worker, client)
            #expect(report.workerCount == 2 && report.targetCount == nil, "\(report)")
        }
        let now = try await client.status(of: "m1", in: moving, viewer: Viewer(user: "u1"))
        #expect(now.status.status == .readBySome)
        #expect(
            try await workers.workers[1].counter("receiptd.events.accepted") == 1,
            "the read, applied once, at the new owner"
        )
        #expect(try await workers.workers[0].counter("receiptd.events.accepted") == 2)
        #expect(
            try await workers.workers[0].counter("receiptd.events.rejected", label: "moving")
                == UInt64(client.currentStatistics.movingRetries)
        )
        await client.shutdown()
    }

    /// Worker 0 sends, worker 2 receives; either is SIGKILLed in the middle of the move.
    @Test(arguments: [0, 2])
    func aWorkerKilledInTheMiddleOfAMoveRecoversAndTheMoveCompletes(killed: Int) async throws {
        let workers = try await WorkerCluster(count: 2, slots: 3, inOneDirectory: true)
        let client = try workers.client(routingCount: 2) { $0.queryTimeoutMilliseconds = 5000 }
        let stream = try await LoadStream.start([client], rounds: 3)

        // One conversation at a time, so that the kill lands in the middle of the move.
        let driver = try RebalanceProcess.start(
            to: 3,
            template: workers.endpointTemplates.query,
            arguments: ["--batch", "1", "--pause-ms", "50", "--verbose"]
        )
        // What the killed worker has done of the move: given away, or taken in.
        let progress: KeyPath<TopologyReport, Int> = killed == 0 ? \.released : \.imported
        let probe = try workers.client(routingCount: 3)
        let report = try await Self.topology(of: killed, probe) { $0[keyPath: progress] >= 2 }
        #expect(report[keyPath: progress] >= 2 && report.targetCount == 3, "not in the middle of the move: \(report)")
        workers.workers[killed].kill9()
        // Down for longer than the driver's reply timeout (1 s): it has to ask again.
        try await Task.sleep(for: .milliseconds(1500))
        try await workers.workers[killed].start()
        let recovered = try await Self.topology(of: killed, probe)
        #expect(
            recovered.targetCount == 3 && recovered[keyPath: progress] >= report[keyPath: progress],
            "the restarted worker forgot the move: \(recovered), before the kill \(report)"
        )
        // The driver waited for the worker and finished the move.
        let finished = try await driver.wait(seconds: 120)
        #expect(finished.status == 0, "\(finished.output)")
        #expect(finished.output.contains("asking again"), "the driver never found the worker down: \(finished.output)")
        await probe.shutdown()

        let sent = try await stream.finish(rounds: 3)
        try await Self.expectOneOwnerAndUnmovedState(workers, to: 3, sent: sent)

        // Running the driver again finds nothing to do.
        let again = try await RebalanceProcess.run(
            to: 3,
            template: workers.endpointTemplates.query,
            arguments: []
        )
        #expect(again.status == 0 && again.output.contains("already serves 3 workers"), "\(again.output)")
        await client.shutdown()
    }

    @Test func aDriverKilledInTheMiddleOfAMoveIsRunAgainAndFinishesIt() async throws {
        let workers = try await WorkerCluster(count: 1, slots: 2, inOneDirectory: true)
        let client = try workers.client(routingCount: 1) { $0.queryTimeoutMilliseconds = 5000 }
        let stream = try await LoadStream.start([client], rounds: 2)

        let first = try RebalanceProcess.start(
            to: 2,
            template: workers.endpointTemplates.query,
            arguments: ["--batch", "1", "--pause-ms", "50"]
        )
        let probe = try workers.client(routingCount: 2) { $0.queryTimeoutMilliseconds = 5000 }
        _ = try await Self.topology(of: 1, probe) { $0.imported >= 2 }
        let midway = try await Self.topology(of: 0, probe)
        #expect(midway.targetCount == 2, "not in the middle of the move: \(midway)")
        first.kill()
        _ = try await first.wait(seconds: 10)
        let second = try await RebalanceProcess.run(
            to: 2,
            template: workers.endpointTemplates.query,
            arguments: []
        )
        #expect(second.status == 0, "\(second.output)")
        for worker in 0..<2 {
            let report = try await Self.topology(of: worker, probe)
            #expect(report.workerCount == 2 && report.targetCount == nil && report.frozen == 0)
        }
        await probe.shutdown()

        let sent = try await stream.finish(rounds: 2)
        try await Self.expectOneOwnerAndUnmovedState(workers, to: 2, sent: sent)
        await client.shutdown()
    }

    /// A worker's placement, once `until` holds (asked every 10 ms, for 6 s at most; the last
    /// answer is returned either way, for the caller to check).
    static func topology(
        of worker: Int,
        _ client: ReceiptsClient,
        until: (TopologyReport) -> Bool = { _ in true }
    ) async throws -> TopologyReport {
        for _ in 0..<600 {
            let reply = try await client.query(.topology, worker: worker)
            guard case .topology(let report) = reply else { throw IntegrationError("worker \(worker): \(reply)") }
            if until(report) { return report }
            try await Task.sleep(for: .milliseconds(10))
        }
        let reply = try await client.query(.topology, worker: worker)
        guard case .topology(let report) = reply else { throw IntegrationError("worker \(worker): \(reply)") }
        return report
    }

    /// Every conversation is served by exactly its owner under `to` workers, and reads the same
    /// (statuses, who read it, unread counts) as on a single worker that got the same events.
    static func expectOneOwnerAndUnmovedState(_ workers: WorkerCluster, to: Int, sent: LoadStream.Sent) async throws {
        let reference = try await ReceiptdProcess()
        for round in [LoadStream.setUpEvents] + sent.byRound {
            let outcomes = try await reference.client.send(round)
            #expect(outcomes.allSatisfy { if case .accepted = $0 { true } else { false } })
        }
        let client = try workers.client(routingCount: to) { $0.queryTimeoutMilliseconds = 5000 }
        for conversation in conversations {
            var serving: [Int] = []
            for worker in workers.workers.indices {
                let reply = try await client.query(.snapshot(conversation: conversation, limit: 0), worker: worker)
                if case .snapshot = reply { serving.append(worker) }
            }
            #expect(serving == [Partitioning.owner(of: conversation, workerCount: to)], "\(conversation)")
            #expect(
                try await view(of: conversation, client, messages: sent.rounds)
                    == view(of: conversation, reference.client, messages: sent.rounds),
                "\(conversation)"
            )
        }
        await client.shutdown()
    }

    /// What a client reads of a conversation, without the server's times.
    static func view(of conversation: String, _ client: ReceiptsClient, messages: Int) async throws -> [String] {
        let snapshot = try await client.snapshot(of: conversation)
        var lines = snapshot.snapshot.messages.map {
            "\($0.message) \($0.status) \($0.recipientCount) \($0.deliveredCount) \($0.readCount)"
        }
        for message in ["m\(messages - 1)", "m\(messages - 2)"] {
            let detail = try await client.readDetail(of: message, in: conversation)
            lines.append("\(message) read \(detail.read.map(\.user)) delivered \(detail.delivered.map(\.user))")
        }
        for user in members {
            let counts = try await client.unreadCounts(for: user, in: [conversation])
            lines += counts.map { "\(user) \($0.unread) \($0.isMarkedUnread) \($0.readUpTo)" }
        }
        return lines
    }
}

/// Gateways streaming rounds of events over every conversation: each round sends a message in
/// each conversation, deliveries and reads, and waits for every acknowledgement.
final class LoadStream: Sendable {
    struct Sent: Sendable {
        var byRound: [[EventKind]] = []
        var events: [EventKind] { byRound.flatMap { $0 } }
        var rejected: [String] = []
        var rounds: Int { byRound.count }
    }

    /// The least time between two rounds: 400 rounds then last 8 s at least, longer than a
    /// test's moves take (a resumed driver alone watches the workers for 2 s first), so that
    /// the rounds after the move are streamed too.
    static let roundPause = Duration.milliseconds(20)

    /// Round `r` goes through `clients[r % clients.count]`.
    let clients: [ReceiptsClient]
    private let state = Mutex<(rounds: Int, stopped: Bool, task: Task<Sent, any Error>?)>((0, false, nil))

    private init(clients: [ReceiptsClient]) {
        self.clients = clients
    }

    /// Rounds acknowledged so far.
    var rounds: Int { state.withLock { $0.rounds } }

    /// The events that create the conversations.
    static let setUpEvents: [EventKind] = ScaleOutTests.conversations.map {
        .conversationUpserted(conversation: $0, kind: .group, members: ScaleOutTests.members)
    }

    /// Creates the conversations, streams in the background (at most 400 rounds or two
    /// minutes, a round every ``roundPause`` at most), and returns once `rounds` rounds are
    /// acknowledged.
    static func start(_ clients: [ReceiptsClient], rounds: Int) async throws -> LoadStream {
        let stream = LoadStream(clients: clients)
        try await stream.setUp()
        stream.state.withLock { $0.task = Task.onOwnThread { try await stream.run(rounds: 400, seconds: 120) } }
        try await stream.waitForRounds(rounds)
        return stream
    }

    /// Streams `rounds` more rounds, stops, and returns what was sent, expecting no event to
    /// have been rejected.
    func finish(rounds more: Int) async throws -> Sent {
        try await waitForRounds(rounds + more)
        let task = state.withLock {
            $0.stopped = true
            return $0.task
        }
        guard let sent = try await task?.value else { throw IntegrationError("the stream never started") }
        #expect(sent.rejected.isEmpty, "\(sent.rejected.prefix(5))")
        return sent
    }

    /// Creates the conversations.
    private func setUp() async throws {
        let outcomes = try await clients[0].send(Self.setUpEvents)
        guard outcomes.allSatisfy({ $0 == .accepted(held: false) }) else {
            throw IntegrationError("the conversations were not created: \(outcomes)")
        }
    }

    /// Streams until stopped, at most `rounds` rounds or `seconds`.
    private func run(rounds limit: Int, seconds: Double) async throws -> Sent {
        var sent = Sent()
        let deadline = Date().addingTimeInterval(seconds)
        for round in 0..<limit where !state.withLock({ $0.stopped }) && Date() < deadline {
            let events = ScaleOutTests.conversations.flatMap { conversation in
                var kinds: [EventKind] = [
                    .messageSent(conversation: conversation, message: "m\(round)", sender: "u1", isSystem: false),
                    .delivered(conversation: conversation, user: "u2", message: "m\(round)"),
                    round % 2 == 0
                        ? .read(conversation: conversation, user: "u3", message: "m\(round)")
                        : .delivered(conversation: conversation, user: "u3", message: "m\(round)"),
                ]
                if round > 0 { kinds.append(.read(conversation: conversation, user: "u2", message: "m\(round - 1)")) }
                return kinds
            }
            let outcomes = try await clients[round % clients.count].send(events)
            // A duplicate is applied too: a worker killed after writing a frame and before
            // acknowledging it recovers the events, and the client's retry finds them.
            // `expectOneOwnerAndUnmovedState` checks that each was applied once.
            for (event, outcome) in zip(events, outcomes) {
                if case .rejected = outcome { sent.rejected.append("round \(round): \(event) -> \(outcome)") }
            }
            sent.byRound.append(events)
            state.withLock { $0.rounds = round + 1 }
            try await Task.sleep(for: Self.roundPause)
        }
        return sent
    }

    /// Waits until `count` rounds are acknowledged (at most a minute).
    private func waitForRounds(_ count: Int) async throws {
        for _ in 0..<6000 {
            if rounds >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw IntegrationError("the stream did not reach \(count) rounds in a minute (at \(rounds))")
    }
}

/// The updates a subscription hands out, collected in the background.
final class Updates: Sendable {
    private final class Store: Sendable {
        let updates = Mutex<[StatusUpdate]>([])
    }

    private let store = Store()
    private let task: Task<Void, Never>

    init(_ updates: StatusUpdates) {
        let store = self.store
        task = Task.onOwnThread {
            for await update in updates { store.updates.withLock { $0.append(update) } }
        }
    }

    deinit {
        task.cancel()
    }

    /// The epochs the updates came under, in order of first sight.
    var epochs: [UInt64] {
        store.updates.withLock { updates in
            var epochs: [UInt64] = []
            for update in updates where !epochs.contains(update.publisherRun) { epochs.append(update.publisherRun) }
            return epochs
        }
    }

    /// Waits until an update matches.
    func waitFor(seconds: Double, _ matches: (StatusUpdate) -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if store.updates.withLock({ $0.contains(where: matches) }) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }
}

/// `receiptctl rebalance` as a process.
struct RebalanceProcess {
    let process: Process
    let outputPath: String

    struct Finished {
        var status: Int32
        var output: String
    }

    /// Starts the driver.
    /// - Parameter timeoutMilliseconds: Its `--timeout-ms`; its default if nil.
    static func start(
        to count: Int,
        template: String,
        arguments: [String],
        timeoutMilliseconds: Int? = 1000
    ) throws -> RebalanceProcess {
        let outputPath = NSTemporaryDirectory() + "rebalance-\(UUID().uuidString).out"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        let process = Process()
        process.executableURL = ReceiptdLauncher.binaryDirectory.appendingPathComponent("receiptctl")
        process.arguments =
            ["rebalance", "--to", "\(count)", "--query-template", template]
            + (timeoutMilliseconds.map { ["--timeout-ms", "\($0)"] } ?? []) + arguments
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("RECEIPTD_") }
        let output = FileHandle(forWritingAtPath: outputPath)
        process.standardOutput = output
        process.standardError = output
        try process.runInTurn()
        return RebalanceProcess(process: process, outputPath: outputPath)
    }

    /// Starts the driver and waits for it (two minutes at most).
    static func run(to count: Int, template: String, arguments: [String]) async throws -> Finished {
        try await start(to: count, template: template, arguments: arguments).wait(seconds: 120)
    }

    /// Waits for the driver to exit, polling with `Task.sleep` (a blocking wait would hold
    /// one of the test run's few cooperative threads for seconds); kills it and throws past
    /// `seconds`.
    func wait(seconds: Double) async throws -> Finished {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            guard Date() < deadline else {
                kill()
                throw IntegrationError("receiptctl rebalance did not finish in \(seconds) s: \(output)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        return Finished(status: process.terminationStatus, output: output)
    }

    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    var output: String {
        (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
    }
}
