import Foundation
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// receiptd's HTTP endpoint: probes, `/metrics` against what was sent, promtool's lint, and a
/// real Prometheus scraping it.
@Suite(.startsProcesses)
struct HTTPEndpointTests {
    /// The names the Grafana dashboard and the alert rules use: `deploy/prometheus/metrics.json`,
    /// which `deploy/check-deploy.sh` checks them against.
    static func contractNames() throws -> [String] {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("deploy/prometheus/metrics.json")
        let contract = try JSONDecoder().decode(Contract.self, from: Data(contentsOf: url))
        return contract.counters + contract.histograms + contract.gauges
    }

    /// The contract file's lists (its description is for people).
    private struct Contract: Decodable {
        var counters: [String]
        var histograms: [String]
        var gauges: [String]
    }

    @Test func healthAndReadinessAnswerWhileServing() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--worker-index", "1", "--worker-count", "2"])
        let address = try #require(daemon.httpAddress)
        let health = try await HTTPProbe.get(address, "/healthz")
        #expect(health.status == 200)
        #expect(health.body == #"{"status":"alive"}"#)
        let ready = try await HTTPProbe.get(address, "/readyz")
        #expect(ready.status == 200)
        #expect(ready.body == #"{"status":"ready","worker":1,"workers":2}"#)
        #expect(try await daemon.health().workerIndex == 1, "the ZeroMQ health query still answers")
    }

    /// A restart with another `--worker-count` serves by the log's count (the configured one is
    /// only warned about), and says so: `/readyz` and `receiptd_worker_info` show the log's.
    @Test func readinessAndWorkerInfoShowTheLogsWorkerCount() async throws {
        let first = try await ReceiptdProcess(arguments: ["--worker-count", "2"])
        #expect(try await first.terminate() == 0)

        let daemon = try await ReceiptdProcess(dataDirectory: first.dataDirectory, arguments: ["--worker-count", "3"])
        let address = try #require(daemon.httpAddress)
        let ready = try await HTTPProbe.get(address, "/readyz")
        #expect(ready.body == #"{"status":"ready","worker":0,"workers":2}"#)
        let text = try await HTTPProbe.get(address, "/metrics").body
        #expect(Self.sample(#"receiptd_worker_info{worker="0",workers="2"}"#, in: text) == 1)
        #expect(!text.contains(#"workers="3""#), "the configured count is not the one served by")
        withExtendedLifetime(first) {}  // it owns the data directory
    }

    /// A fatal log error (here a write past the file-size limit, as on a full disk) stops the
    /// worker at once, but `/metrics` stays up for the grace period, so that the error is
    /// scraped and `ReceiptdFsyncErrors` can fire; then receiptd exits 74.
    // The limit counts the wait for a slot of `.startsProcesses` as well as the test.
    @Test(.timeLimit(.minutes(10)))
    func aFatalLogErrorIsScrapedBeforeTheExit() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--fatal-grace-s", "15"], fileSizeLimitBytes: 1 << 20)
        let address = try #require(daemon.httpAddress)
        let dealer = try ZMQSocket(context: daemon.context, type: .dealer)
        defer { dealer.close() }
        try dealer.setLinger(milliseconds: 0)
        try dealer.connect(daemon.ingestEndpoint)
        var events = EventFactory()
        _ = try dealer.send([
            [],
            EventBatchCodec.encode([
                events.make(.conversationUpserted(conversation: "full-disk", kind: .group, members: ["a", "b"]))
            ]),
        ])
        // About 2 MiB of log, twice the limit.
        for frame in 0..<60 {
            let batch = (0..<500).map { index in
                events.make(
                    .messageSent(
                        conversation: "full-disk",
                        message: "m-\(frame)-\(index)",
                        sender: "a",
                        isSystem: false
                    )
                )
            }
            _ = try dealer.send([[], EventBatchCodec.encode(batch)])
        }

        // The grace period runs from /readyz saying "failed", which comes while the frames above
        // may still be being encoded and sent. The counter goes up when the worker sees the
        // failure, /readyz once the worker has stopped its threads, which on a loaded machine
        // can be a few polls later: both are polled until both say so, well within the grace
        // period.
        let failed = #"503 {"status":"failed"}"#
        var errors: Double?
        var readiness: String?
        let deadline = Date().addingTimeInterval(10)
        while errors != 1 || readiness != failed, Date() < deadline {
            let text = try? await HTTPProbe.get(address, "/metrics").body
            errors = text.flatMap { Self.sample("receiptd_fsync_errors_total", in: $0) }
            if errors == 1, let ready = try? await HTTPProbe.get(address, "/readyz") {
                readiness = "\(ready.status) \(ready.body)"
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(errors == 1, "the log failure was never scraped: \(daemon.standardError().suffix(1500))")
        #expect(readiness == failed)
        // The grace period began before /readyz said "failed"; the exit comes after it, and
        // after whatever the shutdown takes on a loaded machine.
        #expect(try await daemon.waitForExit(laterBySeconds: 15) == 74)
    }

    /// The HTTP server is up before recovery ends: `/readyz` answers 503 "recovering" while the
    /// log replays, then 200.
    @Test func readinessIsUnavailableWhileRecovering() async throws {
        let daemon = try await ReceiptdProcess()
        let conversation = "recover-\(UUID().uuidString.prefix(8))"
        _ = try await daemon.client.send([
            .conversationUpserted(conversation: conversation, kind: .direct, members: ["a", "b"])
        ])
        for block in 0..<500 {
            // A log long enough that replaying it takes a while (about half a second at 1M events/s).
            let kinds: [EventKind] = (0..<1000).map { index in
                .messageSent(conversation: conversation, message: "m\(block)-\(index)", sender: "a", isSystem: false)
            }
            _ = try await daemon.client.send(kinds)
        }
        #expect(try await daemon.terminate() == 0)

        let address = "127.0.0.1:\(try LoopbackPort.free())"
        let watcher = Task.onOwnThread { () -> [String] in
            var answers: [String] = []
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if let response = try? await HTTPProbe.get(address, "/readyz") {
                    answers.append("\(response.status) \(response.body)")
                    if response.status == 200 { break }
                }
                try? await Task.sleep(for: .milliseconds(2))
            }
            return answers
        }
        let restarted = try await ReceiptdProcess(dataDirectory: daemon.dataDirectory, arguments: ["--http", address])
        let answers = await watcher.value
        #expect(answers.contains(#"503 {"status":"recovering"}"#), "\(answers.prefix(3))")
        #expect(answers.last == #"200 {"status":"ready","worker":0,"workers":1}"#)
        #expect(restarted.isRunning)
    }

    @Test func httpOffServesNoHTTP() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--http", "off"])
        #expect(daemon.httpAddress == nil)
        #expect(try await daemon.health().workerCount == 1)
    }

    @Test func metricsCountWhatWasSentAndPassPromtool() async throws {
        let promtool = try HTTPProbe.requireBinary("promtool")
        let daemon = try await ReceiptdProcess()
        let address = try #require(daemon.httpAddress)
        let sent = try await Self.sendEvents(to: daemon, messages: 40)

        let text = try await HTTPProbe.get(address, "/metrics").body
        #expect(Self.sample(#"receiptd_events_total{outcome="accepted",reason=""}"#, in: text) == Double(sent))
        #expect(Self.sample(#"receiptd_events_total{outcome="duplicate",reason=""}"#, in: text) == 0)
        #expect(Self.sample(#"receiptd_frames_total{endpoint="ingest"}"#, in: text).map { $0 >= 1 } == true)
        #expect(Self.sample(#"receiptd_ack_latency_seconds_count"#, in: text).map { $0 >= 1 } == true)
        #expect(Self.sample(#"receiptd_worker_info{worker="0",workers="1"}"#, in: text) == 1)
        for name in try Self.contractNames() {
            #expect(text.contains("# TYPE \(name) "), "\(name) is exported")
        }
        // The dotted counters of the stats query feed the same numbers.
        #expect(try await daemon.counter("receiptd.events.accepted") == UInt64(sent))

        let check = Process()
        check.executableURL = URL(fileURLWithPath: promtool)
        check.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        check.standardInput = input
        check.standardOutput = output
        check.standardError = output
        try check.runInTurn()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        // Read first: a report longer than the pipe holds would otherwise keep promtool from ending.
        let report = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let exited = await check.exited(within: 30)
        #expect(exited && check.terminationStatus == 0, "promtool check metrics: \(report)")
    }

    /// One acknowledged frame in 16 is timed stage by stage: 64 frames in flight from a raw
    /// DEALER give 4 samples of every stage (none missed: the log reports a group commit before
    /// it makes the group durable); frames of duplicates only (nothing logged) give none; the
    /// publishing thread times the batches it sends.
    @Test func sampledFramesAreTimedStageByStage() async throws {
        let daemon = try await ReceiptdProcess()
        let address = try #require(daemon.httpAddress)
        var factory = EventFactory()
        let upsert = factory.make(.conversationUpserted(conversation: "s", kind: .direct, members: ["a", "b"]))
        let batches =
            [[upsert]]
            + (1..<64).map { index in
                [factory.make(.messageSent(conversation: "s", message: "m\(index)", sender: "a", isSystem: false))]
            }
        let replies = try daemon.ingestPipelined(batches)
        #expect(replies.allSatisfy { $0.error == nil && $0.results == [.accepted(held: false)] })
        let again = try daemon.ingestPipelined(Array(batches.prefix(16)))
        #expect(again.allSatisfy { $0.results == [.duplicate] })

        let text = try await HTTPProbe.get(address, "/metrics").body
        let logged = ["apply", "append", "commit_wait", "write", "fdatasync", "completion"]
        for stage in logged + ["reply"] {
            let count = Self.sample(#"receiptd_ingest_stage_seconds_count{stage="\#(stage)"}"#, in: text)
            #expect(count == 4, "\(stage): \(String(describing: count))")
        }
        let fdatasync = try #require(Self.sample(#"receiptd_ingest_stage_seconds_sum{stage="fdatasync"}"#, in: text))
        #expect(fdatasync > 0)
        // The publishing thread times its stage after the replies went out: a scrape may come
        // first (a full run saw no sample yet), so the sample is waited for, 5 s at most.
        var published = Self.sample(#"receiptd_ingest_stage_seconds_count{stage="publish"}"#, in: text)
        let deadline = ContinuousClock.now + .seconds(5)
        while published.map({ $0 >= 1 }) != true, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            let later = try await HTTPProbe.get(address, "/metrics").body
            published = Self.sample(#"receiptd_ingest_stage_seconds_count{stage="publish"}"#, in: later)
        }
        #expect(published.map { $0 >= 1 } == true, "\(String(describing: published))")
    }

    @Test func aRealPrometheusScrapesTheCounters() async throws {
        let binary = try HTTPProbe.requireBinary("prometheus")
        let daemon = try await ReceiptdProcess()
        let target = try #require(daemon.httpAddress)
        let prometheus = try await PrometheusServer.startedAndReady(binary: binary, target: target)
        defer { prometheus.stop() }

        let sent = try await Self.sendEvents(to: daemon, messages: 25)
        let query = #"receiptd_events_total{outcome="accepted"}"#
        let scraped = try await prometheus.waitForValue(of: query, toEqual: Double(sent))
        #expect(scraped == Double(sent))
    }

    /// Creates a conversation and sends `messages` messages, each with a read.
    /// - Returns: How many events were accepted (all of them).
    static func sendEvents(to daemon: ReceiptdProcess, messages: Int) async throws -> Int {
        let conversation = "http-\(UUID().uuidString.prefix(8))"
        var kinds: [EventKind] = [
            .conversationUpserted(conversation: conversation, kind: .direct, members: ["a", "b"])
        ]
        for index in 0..<messages {
            kinds.append(.messageSent(conversation: conversation, message: "m\(index)", sender: "a", isSystem: false))
            kinds.append(.read(conversation: conversation, user: "b", message: "m\(index)"))
        }
        let outcomes = try await daemon.client.send(kinds)
        #expect(outcomes.allSatisfy { $0 == .accepted(held: false) })
        return outcomes.count
    }

    /// The value of the sample named exactly `series` (name and labels) in exposition text.
    static func sample(_ series: String, in text: String) -> Double? {
        text.split(separator: "\n").first { $0.hasPrefix(series + " ") }
            .flatMap { Double($0.dropFirst(series.count + 1)) }
    }
}
