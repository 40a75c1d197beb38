import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsWire
import Testing
import ZeroMQ

/// A real `receiptd` child process on its own data directory (started by the kit's
/// `ReceiptdLauncher`), with a `ReceiptsClient` for it.
///
/// Events and queries go through the client, which talks to this one process as worker 0 of
/// a one-worker cluster whatever its `--worker-index`; raw sockets remain only for tests of
/// the wire contract itself. Every wait is bounded: by a timeout, or by a deadline after which
/// the process is killed and the test fails instead of hanging CI. The long waits (start-up,
/// exit) run on a thread of their own, not on one of the cooperative pool's few.
///
/// `@unchecked Sendable`: a test uses it from one task at a time; the waits on their own
/// thread run while that task is suspended on them.
final class ReceiptdProcess: @unchecked Sendable {
    /// One context for every raw socket in the test process, never terminated: a socket that
    /// outlives a daemon (a gateway reconnecting after a restart) must not block teardown.
    static let sharedContext: ZMQContext = {
        do {
            return try ZMQContext()
        } catch {
            fatalError("cannot create a ZeroMQ context: \(error)")
        }
    }()

    /// How long start-up (recovery included) may take before the test gives up.
    static let startDeadlineSeconds = 30.0
    /// How long a graceful stop may take before the process is killed and the test fails.
    static let stopDeadlineSeconds = 15.0

    let dataDirectory: String
    let arguments: [String]
    /// Variables set for the daemon on top of the test runner's environment (see `start`).
    let environment: [String: String]
    /// The keys of ``client`` (and of ``makeClient(source:curve:)`` by default), with CURVE on.
    let curve: CurveClientKeys?
    /// The largest file the daemon may write (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored, so a write
    /// past it fails with EFBIG: a full disk as far as the log can tell); nil for no limit.
    let fileSizeLimitBytes: Int?
    var context: ZMQContext { Self.sharedContext }
    /// This worker's ordinal and the worker count, from its health reply.
    private(set) var worker = (index: 0, count: 1)
    /// The address (`host:port`) of the daemon's HTTP endpoint, from its "ready" log line;
    /// nil when started with `--http off`.
    private(set) var httpAddress: String?
    private let launcher: ReceiptdLauncher
    /// The client of the running process; nil once it is stopped.
    private var currentClient: ReceiptsClient?
    /// The raw DEALER of the wire-contract tests (`ingestRaw`, `ingestPipelined`).
    private var rawIngestSocket: ZMQSocket?
    private let ownsDirectory: Bool
    /// Whether start-up waits for a health answer (false for a member that binds no query
    /// endpoint: a standby with CURVE configured).
    private let awaitsHealth: Bool

    /// Starts receiptd and waits until it answers a health query.
    /// - Parameters:
    ///   - dataDirectory: reuse a directory (restart tests); nil makes a fresh one.
    ///   - arguments: extra flags for receiptd.
    ///   - environment: variables for receiptd, on top of the runner's (see `start`).
    ///   - curve: the keys of the process's own client when receiptd runs with CURVE (an
    ///     operator's, to ask health and stats); nil for plaintext.
    ///   - fileSizeLimitBytes: the largest file the daemon may write; nil for no limit.
    ///   - awaitsHealth: wait for a health answer before the ready line; false for a member that
    ///     binds no query endpoint.
    init(
        dataDirectory: String? = nil,
        arguments: [String] = [],
        environment: [String: String] = [:],
        curve: CurveClientKeys? = nil,
        fileSizeLimitBytes: Int? = nil,
        awaitsHealth: Bool = true
    ) async throws {
        self.awaitsHealth = awaitsHealth
        if let dataDirectory {
            self.dataDirectory = dataDirectory
            ownsDirectory = false
        } else {
            self.dataDirectory = try TemporaryDirectory.make(prefix: "rdit")
            ownsDirectory = true
        }
        launcher = ReceiptdLauncher(dataDirectory: self.dataDirectory)
        self.arguments = arguments
        self.environment = environment
        self.curve = curve
        self.fileSizeLimitBytes = fileSizeLimitBytes
        try await start()
    }

    deinit {
        rawIngestSocket?.close()
        launcher.kill9()
        if ownsDirectory {
            try? FileManager.default.removeItem(atPath: dataDirectory)
        }
    }

    /// The daemon's default endpoints under its data directory.
    var endpoints: WorkerEndpoints { WorkerEndpoints(dataDirectory: dataDirectory) }
    var ingestEndpoint: String { endpoints.ingest }
    var publishEndpoint: String { endpoints.publish }
    var queryEndpoint: String { endpoints.query }
    var ingestSubscribeEndpoint: String { endpoints.ingestSubscribe }

    /// Launches the binary (again, after `terminate` or `kill`), makes a new client for it and
    /// waits for health.
    ///
    /// The daemon gets the launcher's cleared environment (without `HOSTNAME` and `RECEIPTD_*`),
    /// then `environment`.
    func start() async throws {
        try await BlockingWait.onOwnThread { try self.startOnThisThread() }
    }

    /// ``start()``'s blocking part.
    private func startOnThisThread() throws {
        stopClients()
        // Info level for the "ready" line with the HTTP address (a test's own --http comes
        // after the launcher's free port and wins).
        let logStart = try launcher.launch(
            arguments: ["--log-level", "info"] + arguments,
            environment: environment,
            fileSizeLimitBytes: fileSizeLimitBytes
        )
        let client = try makeClient()
        currentClient = client
        if awaitsHealth { try waitUntilHealthy(client) }
        httpAddress = try waitForReadyLine(after: logStart)
    }

    /// Reads the HTTP address from this start's "ready" log line (logged once the worker serves
    /// and the HTTP listener is bound), waiting for it within the start deadline.
    /// - Parameter offset: Where this start's output begins in the standard-error file.
    /// - Returns: `host:port`, or nil if the daemon runs with `--http off`.
    private func waitForReadyLine(after offset: UInt64) throws -> String? {
        let deadline = Date().addingTimeInterval(Self.startDeadlineSeconds)
        while Date() < deadline {
            let output = standardError().utf8.dropFirst(Int(offset))
            for line in String(decoding: output, as: UTF8.self).split(separator: "\n")
            where line.contains(#""message":"ready""#) {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String],
                    let address = object["http.address"]
                else { throw IntegrationError("unreadable ready line: \(line)") }
                return address == "off" ? nil : address
            }
            usleep(10_000)
        }
        throw IntegrationError("no ready line within \(Self.startDeadlineSeconds) s: \(standardError())")
    }

    /// Asks for health until the daemon answers, in short attempts so that an exit is noticed.
    ///
    /// `start()` is synchronous, so the client's async health query runs through `BlockingWait`.
    private func waitUntilHealthy(_ client: ReceiptsClient) throws {
        let deadline = Date().addingTimeInterval(Self.startDeadlineSeconds)
        while Date() < deadline {
            guard launcher.isRunning else {
                throw IntegrationError("receiptd exited during start-up: \(standardError())")
            }
            if let health = try? BlockingWait.run(seconds: 0.2, { try await client.health(worker: 0) }) {
                worker = (health.workerIndex, health.workerCount)
                return
            }
        }
        kill9()
        throw IntegrationError(
            "receiptd did not answer health within \(Self.startDeadlineSeconds) s; killed: \(standardError())"
        )
    }

    /// What receiptd wrote to standard error so far (for failure messages).
    func standardError() -> String {
        launcher.standardError()
    }

    // MARK: - Clients

    /// The client of the running daemon, made by `start()`.
    /// - Throws: if the daemon was stopped (`terminate`, `kill9`) and not started again.
    var client: ReceiptsClient {
        get throws {
            guard let currentClient else { throw IntegrationError("receiptd was stopped; start() it first") }
            return currentClient
        }
    }

    /// A new client of this one daemon (worker 0 of a one-worker cluster, whatever its
    /// `--worker-index`), with timeouts short enough for tests.
    ///
    /// The acknowledgement timeout is as long as the query timeout: a frame re-sent only
    /// because a loaded daemon was slow would count its events as duplicates, which some
    /// tests count.
    /// - Parameters:
    ///   - source: The event source id; nil for a random one.
    ///   - curve: The client's CURVE keys; by default those the process was made with.
    func makeClient(source: String? = nil, curve: CurveClientKeys?? = nil) throws -> ReceiptsClient {
        var configuration = ReceiptsClient.Configuration(
            cluster: Cluster(workers: [Cluster.Worker(dataDirectory: dataDirectory)]),
            source: source
        )
        configuration.curve = curve ?? self.curve
        configuration.queryTimeoutMilliseconds = 5000
        configuration.acknowledgementTimeoutMilliseconds = 5000
        return try ReceiptsClient(configuration, logger: Logger(label: "receiptd-integration-tests"))
    }

    /// Sends events with the ids they carry and waits until they are acknowledged.
    /// - Returns: one outcome per event, in order.
    func ingest(_ events: [Event]) async throws -> [EventOutcome] {
        try await client.send(identified: events)
    }

    /// Sends every batch as its own frame first, then waits for the acknowledgements, in order.
    ///
    /// Raw, because it tests the wire contract itself: `ReceiptsClient` would merge concurrent
    /// sends into one frame, and coalescing across frames is what the caller asserts.
    func ingestPipelined(_ batches: [[Event]], timeoutMilliseconds: Int32 = 5000) throws -> [IngestReply] {
        try exchangeRaw(batches.map { [EventBatchCodec.encode($0)] }, timeoutMilliseconds: timeoutMilliseconds).map {
            try IngestReply.decode($0)
        }
    }

    /// Closes the raw DEALER, so that the next raw request starts on a new connection (after a
    /// request that got no reply, whose reply would otherwise come first).
    func resetRawIngest() {
        rawIngestSocket?.close()
        rawIngestSocket = nil
    }

    /// Sends raw body frames (after the empty delimiter) to the acknowledged ingest endpoint.
    ///
    /// Raw, because it tests the wire contract itself: malformed, oversized or wrongly framed
    /// input that no client would send.
    /// - Returns: the reply body.
    func ingestRaw(_ body: [[UInt8]], timeoutMilliseconds: Int32 = 5000) throws -> [UInt8] {
        try exchangeRaw([body], timeoutMilliseconds: timeoutMilliseconds)[0]
    }

    /// Sends every request's body frames on the raw DEALER, then reads one reply body per
    /// request, in order.
    private func exchangeRaw(_ requests: [[[UInt8]]], timeoutMilliseconds: Int32 = 5000) throws -> [[UInt8]] {
        // A raw socket: it tests the wire contract itself.
        let socket =
            try rawIngestSocket
            ?? {
                let socket = try ZMQSocket(context: context, type: .dealer)
                try socket.connect(ingestEndpoint)
                rawIngestSocket = socket
                return socket
            }()
        for body in requests {
            _ = try socket.send([[]] + body)
        }
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        return try requests.map { _ in
            guard let reply = try socket.receiveMultipart() else {
                throw IntegrationError("no ingest reply within \(timeoutMilliseconds) ms")
            }
            guard reply.count == 2, reply[0].isEmpty else {
                throw IntegrationError("ingest reply has \(reply.count) frames")
            }
            return reply[1]
        }
    }

    /// The status of a message with display text for `viewer`.
    func status(_ conversation: String, _ message: String, viewer: Viewer) async throws -> ReceiptsClient.ViewedStatus {
        try await client.status(of: message, in: conversation, viewer: viewer)
    }

    /// The health reply.
    func health() async throws -> Health {
        try await client.health(worker: 0)
    }

    /// The value of a counter from the stats query (0 if absent).
    func counter(_ name: String, label: String = "") async throws -> UInt64 {
        try await client.stats(worker: 0).first { $0.name == name && $0.label == label }?.value ?? 0
    }

    /// Polls the stats query, back to back, until counter `name` reaches `value`; returns as
    /// soon as a reply shows it, so the caller acts on a state that is only microseconds old.
    /// - Throws: if it does not within `timeoutMilliseconds`.
    func waitForCounter(
        _ name: String,
        label: String = "",
        toReach value: UInt64,
        timeoutMilliseconds: Int = 10_000
    ) async throws {
        let deadline = Date().addingTimeInterval(Double(timeoutMilliseconds) / 1000)
        var seen = try await counter(name, label: label)
        while seen < value {
            guard Date() < deadline else {
                throw IntegrationError(
                    "\(name){\(label)} is \(seen) after \(timeoutMilliseconds) ms, expected \(value)"
                )
            }
            seen = try await counter(name, label: label)
        }
    }

    /// A subscriber to one conversation's updates, attached by the publisher before it returns.
    ///
    /// Readiness is proven on the wire: the subscriber also follows a probe conversation of
    /// its own (owned by this worker), and probe messages are ingested, each a new message,
    /// until the subscriber receives a probe update: at most 100 tries of 50 ms.
    func subscribe(to conversation: String) async throws -> Subscriber {
        var probe = "probe-\(UUID().uuidString.prefix(8))"
        while Partitioning.owner(of: probe, workerCount: worker.count) != worker.index {
            probe = "probe-\(UUID().uuidString.prefix(8))"
        }
        let subscriber = try Subscriber(
            context: context,
            endpoint: publishEndpoint,
            conversation: conversation,
            probe: probe
        )
        try await ingestProbe(
            .conversationUpserted(conversation: probe, kind: .direct, members: ["probe-a", "probe-b"])
        )
        for attempt in 1...100 {
            try await ingestProbe(
                .messageSent(conversation: probe, message: "p\(attempt)", sender: "probe-a", isSystem: false)
            )
            if try subscriber.waitForProbe(timeoutMilliseconds: 50) { return subscriber }
        }
        throw IntegrationError("the publisher did not attach a subscriber within 100 probe messages")
    }

    /// Sends a probe event numbered by the client, from its own source.
    private func ingestProbe(_ kind: EventKind) async throws {
        let outcome = try await client.send(kind)
        guard outcome == .accepted(held: false) else { throw IntegrationError("probe event refused: \(outcome)") }
    }

    // MARK: - Lifecycle

    /// Sends SIGTERM and waits for exit (see `waitForExit`).
    /// - Returns: the exit status.
    @discardableResult
    func terminate() async throws -> Int32 {
        try await BlockingWait.onOwnThread {
            self.stopClients()
            self.signal(SIGTERM)
            return try self.waitForExitOnThisThread(seconds: Self.stopDeadlineSeconds)
        }
    }

    /// The daemon process is alive.
    var isRunning: Bool { launcher.isRunning }

    /// The names of the running process's threads (`/proc/<pid>/task/*/comm`), as `top -H` shows them.
    func threadNames() throws -> [String] {
        guard launcher.isRunning else { throw IntegrationError("receiptd is not running") }
        let tasks = "/proc/\(launcher.processIdentifier)/task"
        return try FileManager.default.contentsOfDirectory(atPath: tasks).map { task in
            try String(contentsOfFile: "\(tasks)/\(task)/comm", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    /// Sends a signal to the daemon, leaving the test's clients connected.
    ///
    /// SIGSTOP returns once the kernel reports the process stopped (state `T` in
    /// `/proc/<pid>/stat`, within 2 s): on a loaded machine the stop can lag the signal, and a
    /// test that pauses a worker must not send it anything before it is paused.
    func signal(_ signalNumber: Int32) {
        guard launcher.isRunning else { return }
        let pid = launcher.processIdentifier
        launcher.signal(signalNumber)
        guard signalNumber == SIGSTOP else { return }
        let deadline = Date().addingTimeInterval(2)
        while Date() < deadline {
            if let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")"),
                stat[stat.index(after: close)...].split(separator: " ").first == "T"
            {
                return
            }
            usleep(1_000)
        }
    }

    /// Waits up to `stopDeadlineSeconds` for the daemon to exit, after `laterBySeconds` (a wait
    /// the daemon itself makes before it begins to exit, such as `--fatal-grace-s`).
    /// - Returns: its exit status, or 128 + the signal number if a signal ended it.
    /// - Throws: if it is still running at the deadline; it is then killed with SIGKILL.
    func waitForExit(laterBySeconds: Double = 0) async throws -> Int32 {
        try await BlockingWait.onOwnThread {
            try self.waitForExitOnThisThread(seconds: laterBySeconds + Self.stopDeadlineSeconds)
        }
    }

    /// ``waitForExit(laterBySeconds:)``'s blocking part.
    private func waitForExitOnThisThread(seconds: Double) throws -> Int32 {
        guard let process = launcher.process else { throw IntegrationError("receiptd was never started") }
        guard process.waitForExit(seconds: seconds) else {
            launcher.kill9()
            throw IntegrationError(
                "receiptd did not exit within \(seconds) s; killed: \(standardError().suffix(2000))"
            )
        }
        return process.exitStatus
    }

    /// Sends SIGKILL and waits for the process to be gone.
    func kill9() {
        stopClients()
        launcher.kill9()
    }

    /// Shuts the client down (its waiting calls fail with `.closed`, and its retries stop) and
    /// closes the raw socket, so that nothing of theirs reaches a daemon started again on the
    /// same endpoints.
    private func stopClients() {
        rawIngestSocket?.close()
        rawIngestSocket = nil
        if let client = currentClient {
            currentClient = nil
            _ = try? BlockingWait.run(seconds: Self.stopDeadlineSeconds) { await client.shutdown() }
        }
    }
}
