import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// Acknowledged means durable: graceful shutdown and SIGKILL at random moments, with
/// frequent compaction, never lose an acknowledged event nor apply one twice.
@Suite(.serialized, .startsProcesses)
struct DurabilityTests {
    /// A gateway that keeps a window of batches in flight on a DEALER and records which
    /// events were acknowledged as accepted.
    ///
    /// Raw, not a `ReceiptsClient`: the tests assert the daemon's per-frame acknowledgements
    /// (a frame answered is durable, one never answered is not in the log after a graceful
    /// stop), which a client that re-sends unanswered frames would hide.
    final class PipelinedGateway {
        private var socket: ZMQSocket
        private var events: EventFactory
        /// Conversation -> acknowledged message ids, across restarts.
        private(set) var acknowledged: [String: [String]] = [:]
        private(set) var acknowledgedBatches: [[Event]] = []
        private var inFlight: [[Event]] = []
        let conversations: [String]
        private var nextMessage = 0

        init(daemon: ReceiptdProcess, conversations: [String], source: String) throws {
            socket = try Self.connect(daemon)
            events = EventFactory(source: source)
            self.conversations = conversations
        }

        deinit { socket.close() }

        private static func connect(_ daemon: ReceiptdProcess) throws -> ZMQSocket {
            // A raw socket: it tests the wire contract itself (per-frame acknowledgement).
            let socket = try ZMQSocket(context: daemon.context, type: .dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.setReceiveTimeout(milliseconds: 5000)
            try socket.connect(daemon.ingestEndpoint)
            return socket
        }

        /// Talks to a restarted daemon; batches still in flight were never acknowledged.
        func reconnect(to daemon: ReceiptdProcess) throws {
            disconnect()
            socket = try Self.connect(daemon)
        }

        /// Closes the socket, dropping the batches still in flight, so that none of them
        /// reaches a daemon restarted on the same endpoint.
        func disconnect() {
            socket.close()
            inFlight.removeAll()
        }

        /// Creates the conversations (acknowledged before returning).
        func setUp() throws {
            let batch = conversations.map { conversation in
                events.make(
                    .conversationUpserted(conversation: conversation, kind: .group, members: ["s", "r1", "r2"])
                )
            }
            try send(batch)
            try receiveOne()
        }

        /// Sends one batch of new messages, each with a read by r1, without waiting.
        func sendBatch(size: Int) throws {
            var batch: [Event] = []
            for _ in 0..<size {
                nextMessage += 1
                let conversation = conversations[nextMessage % conversations.count]
                batch.append(
                    events.make(
                        .messageSent(
                            conversation: conversation,
                            message: "m\(nextMessage)",
                            sender: "s",
                            isSystem: false
                        )
                    )
                )
                batch.append(events.make(.read(conversation: conversation, user: "r1", message: "m\(nextMessage)")))
            }
            try send(batch)
        }

        private func send(_ batch: [Event]) throws {
            _ = try socket.send([[], EventBatchCodec.encode(batch)])
            inFlight.append(batch)
        }

        /// Waits for the oldest batch's acknowledgement and records it.
        /// - Returns: false if none came within the timeout.
        @discardableResult
        func receiveOne(timeoutMilliseconds: Int32 = 5000) throws -> Bool {
            try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
            guard let frames = try socket.receiveMultipart(), let body = frames.last else { return false }
            let reply = try IngestReply.decode(body)
            let batch = inFlight.removeFirst()
            #expect(reply.results.count == batch.count)
            for (event, outcome) in zip(batch, reply.results) {
                #expect(outcome == .accepted(held: false), "\(event.kind) -> \(outcome)")
                if case .messageSent(let conversation, let message, _, _, _, _) = event.kind {
                    acknowledged[conversation, default: []].append(message)
                }
            }
            acknowledgedBatches.append(batch)
            return true
        }

        var inFlightCount: Int { inFlight.count }
        var acknowledgedMessageCount: Int { acknowledged.values.reduce(0) { $0 + $1.count } }
    }

    /// Every acknowledged message is there exactly once, read by r1, in gap-free sequence order.
    /// - Parameters:
    ///   - exact: nothing else is there either: after a graceful stop, every batch the daemon
    ///     logged was answered (a crash may leave logged batches unanswered).
    ///   - context: added to every failure message.
    private func verifyRecovered(
        _ daemon: ReceiptdProcess,
        _ gateway: PipelinedGateway,
        exact: Bool = false,
        _ context: String = ""
    ) async throws {
        for conversation in gateway.conversations {
            let messages = gateway.acknowledged[conversation] ?? []
            let snapshot = try await daemon.client.snapshot(of: conversation).snapshot
            let present = Set(snapshot.messages.map(\.message))
            let missing = messages.filter { !present.contains($0) }
            #expect(missing.isEmpty, "acknowledged but lost in \(conversation): \(missing.prefix(5)) \(context)")
            if exact {
                let unanswered = present.subtracting(messages)
                #expect(unanswered.isEmpty, "logged but never answered in \(conversation): \(unanswered.prefix(5))")
            }
            #expect(
                snapshot.messages.map(\.sequence) == (0..<snapshot.messages.count).map { UInt64($0 + 1) },
                "gap-free sequence \(context)"
            )
            #expect(
                Set(snapshot.messages.map(\.message)).count == snapshot.messages.count,
                "a message applied twice \(context)"
            )
            for status in snapshot.messages {
                #expect(status.readCount == 1, "\(status.message) read once by r1, got \(status.readCount) \(context)")
            }
        }
    }

    /// Reads acknowledgements until the daemon has exited and the socket stayed quiet after
    /// that, or the stop deadline passed.
    private func drainAcknowledgements(_ gateway: PipelinedGateway, from daemon: ReceiptdProcess) throws {
        let deadline = Date().addingTimeInterval(ReceiptdProcess.stopDeadlineSeconds)
        while gateway.inFlightCount > 0, Date() < deadline {
            let exited = !daemon.isRunning
            if try gateway.receiveOne(timeoutMilliseconds: 200) { continue }
            if exited { break }
        }
    }

    @Test("SIGTERM after every batch was taken in: each is answered, exit 0, every acknowledged event survives")
    func gracefulShutdownKeepsAcknowledged() async throws {
        let daemon = try await ReceiptdProcess()
        let gateway = try PipelinedGateway(daemon: daemon, conversations: ["t1", "t2", "t3"], source: "sigterm")
        try gateway.setUp()
        let batches = 40
        let before = try await daemon.counter("receiptd.frames.received", label: "ingest")
        for _ in 0..<batches { try gateway.sendBatch(size: 100) }
        // Every frame is inside the daemon (decoded, applied, appended) before SIGTERM, so each
        // one must be answered: shutdown stops intake, makes the log durable and replies.
        try await daemon.waitForCounter(
            "receiptd.frames.received",
            label: "ingest",
            toReach: before + UInt64(batches)
        )
        daemon.signal(SIGTERM)
        try drainAcknowledgements(gateway, from: daemon)
        #expect(
            gateway.inFlightCount == 0,
            "\(gateway.inFlightCount) of \(batches) batches taken in were never answered"
        )
        #expect(gateway.acknowledgedMessageCount == batches * 100)
        #expect(
            try await daemon.waitForExit() == 0,
            "graceful shutdown exits 0: \(daemon.standardError().suffix(2000))"
        )
        gateway.disconnect()

        let restarted = try await ReceiptdProcess(dataDirectory: daemon.dataDirectory)
        try await verifyRecovered(restarted, gateway, exact: true)
    }

    @Test("SIGTERM while batches stream in: every batch in the log was answered, exit 0, nothing acknowledged is lost")
    func gracefulShutdownMidStreamAnswersEverythingLogged() async throws {
        let daemon = try await ReceiptdProcess()
        let gateway = try PipelinedGateway(daemon: daemon, conversations: ["u1", "u2", "u3"], source: "sigterm-stream")
        try gateway.setUp()
        // A steady stream with a window of 8 batches: SIGTERM lands while the daemon reads
        // and logs, so some batches are appended but not yet durable. Those must be answered;
        // batches it never read stay unanswered, and none of them may be in the log.
        let batches = 200
        for index in 0..<batches {
            let stopping = index >= batches / 2
            if index == batches / 2 { daemon.signal(SIGTERM) }
            try gateway.sendBatch(size: 50)
            if gateway.inFlightCount > 8, try !gateway.receiveOne(timeoutMilliseconds: stopping ? 500 : 5000) {
                guard stopping else { throw IntegrationError("no acknowledgement within 5 s before SIGTERM") }
                break
            }
        }
        try drainAcknowledgements(gateway, from: daemon)
        #expect(
            try await daemon.waitForExit() == 0,
            "graceful shutdown exits 0: \(daemon.standardError().suffix(2000))"
        )
        gateway.disconnect()

        let restarted = try await ReceiptdProcess(dataDirectory: daemon.dataDirectory)
        try await verifyRecovered(restarted, gateway, exact: true)
    }

    @Test("SIGKILL at random moments, during compaction too: acknowledged events survive, none applied twice")
    func crashLoopKeepsAcknowledged() async throws {
        let seed =
            ProcessInfo.processInfo.environment["RECEIPTD_CRASH_SEED"].flatMap { UInt64($0) }
            ?? UInt64.random(in: 0...UInt64.max)
        let replay = "seed \(seed); rerun with RECEIPTD_CRASH_SEED=\(seed)"
        // A thrown error (a restart that fails, a reply that never comes) names the seed too.
        do {
            try await crashLoop(seed: seed, replay: replay)
        } catch let error as ExpectationFailedError {
            throw error
        } catch {
            throw IntegrationError("\(error); \(replay)")
        }
    }

    private func crashLoop(seed: UInt64, replay: String) async throws {
        var generator = SplitMix64(seed: seed)
        let arguments = ["--compact-bytes", "32768"]
        var daemon = try await ReceiptdProcess(arguments: arguments)
        let owner = daemon  // owns and finally removes the data directory
        let gateway = try PipelinedGateway(daemon: daemon, conversations: ["k1", "k2", "k3", "k4"], source: "crash")
        try gateway.setUp()
        let deadline = Date().addingTimeInterval(90)
        var rounds = 0
        var killsDuringCompaction = 0
        // At least 6 rounds; more (up to 24) until one kill lands inside a compaction, which on
        // a fast machine can finish before the test sees it start.
        while rounds < 6 || (killsDuringCompaction == 0 && rounds < 24), Date() < deadline {
            rounds += 1
            for _ in 0..<Int.random(in: 20...120, using: &generator) {
                try gateway.sendBatch(size: Int.random(in: 1...30, using: &generator))
                if gateway.inFlightCount > 8 { try gateway.receiveOne() }
            }
            // Even rounds kill the moment a requested compaction has started; odd ones at random.
            if rounds.isMultiple(of: 2) {
                if try await killDuringCompaction(daemon) { killsDuringCompaction += 1 }
            } else {
                usleep(UInt32.random(in: 0...20_000, using: &generator))
                daemon.kill9()
            }

            daemon = try await ReceiptdProcess(dataDirectory: owner.dataDirectory, arguments: arguments)
            try gateway.reconnect(to: daemon)
            try await verifyRecovered(daemon, gateway, replay)

            // Re-sending acknowledged batches is recognised as duplicates, never applied twice.
            for batch in gateway.acknowledgedBatches.suffix(10) {
                let outcomes = try await daemon.ingest(batch)
                #expect(
                    outcomes.allSatisfy { $0 == .duplicate },
                    "round \(rounds): a resent batch was applied again; \(replay)"
                )
            }
        }
        #expect(gateway.acknowledgedMessageCount > 0, "\(replay)")
        #expect(killsDuringCompaction > 0, "no round killed the daemon while a compaction ran; \(replay)")
        let files = try FileManager.default.contentsOfDirectory(atPath: owner.dataDirectory)
        #expect(files.contains { $0.hasPrefix("snapshot-") }, "compaction ran during the loop: \(files); \(replay)")
        #expect(try await daemon.terminate() == 0, "\(replay)")
    }

    /// Requests a compaction through a client of its own, polls the stats until the daemon has
    /// taken the request (so a compaction is running: it started, or it was already running and
    /// the request waits for it), and kills the daemon right then.
    ///
    /// - Returns: true if the compaction was unfinished at the kill: the last stats before it
    ///   counted no compaction finished since the request, and no reply came within 300 ms.
    private func killDuringCompaction(_ daemon: ReceiptdProcess) async throws -> Bool {
        // Not the daemon's client: `kill9` shuts that one down, and a reply sent just before
        // the kill must still be read.
        let requester = try daemon.makeClient()
        func finished(_ counters: [Counter]) -> UInt64 {
            counters.filter { $0.name == "receiptd.compactions" || $0.name == "receiptd.compactions.failed" }.reduce(0)
            { $0 + $1.value }
        }
        func served(_ counters: [Counter]) -> UInt64 {
            counters.first { $0.name == "receiptd.queries.served" && $0.label == "compact" }?.value ?? 0
        }
        let before = try await daemon.client.stats(worker: 0)
        let compaction = Task.onOwnThread { try await requester.compact(worker: 0) }
        var taken = false
        var finishedSinceRequest = false
        for _ in 0..<1000 where !taken {
            let now = try await daemon.client.stats(worker: 0)
            taken = served(now) > served(before)
            finishedSinceRequest = finished(now) > finished(before)
        }
        daemon.kill9()
        let replied = await Self.value(of: compaction, within: .milliseconds(300)) != nil
        await requester.shutdown()
        return taken && !finishedSinceRequest && !replied
    }

    /// The task's value if it finishes within `deadline`, else nil: a dead daemon never
    /// answers, so the task is then cancelled (a `ReceiptsClient` call stops waiting at once).
    private static func value<Value: Sendable>(
        of task: Task<Value, any Error>,
        within deadline: Duration
    ) async -> Value? {
        let timer = Task.onOwnThread {
            try await Task.sleep(for: deadline)
            task.cancel()
        }
        defer { timer.cancel() }
        return try? await task.value
    }
}
