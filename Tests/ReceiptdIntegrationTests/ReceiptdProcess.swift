import Foundation
import ReceiptsCore
import ReceiptsWire
import Testing
import ZeroMQ

/// A real `receiptd` child process on its own data directory, with clients for its endpoints.
///
/// Ingest goes through a DEALER (the gateway shape that pipelines), queries through a REQ
/// (the client shape the contract names). Every wait is bounded: by a receive timeout, or by
/// a deadline after which the process is killed and the test fails instead of hanging CI.
final class ReceiptdProcess {
    /// Where the test runner finds the built binaries: beside the test bundle, or `RECEIPTD_BIN_DIR`.
    static let binaryDirectory: URL = {
        if let directory = ProcessInfo.processInfo.environment["RECEIPTD_BIN_DIR"] {
            return URL(fileURLWithPath: directory)
        }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent()
    }()

    /// One context for every client in the test process, never terminated: a socket that
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
    var context: ZMQContext { Self.sharedContext }
    /// This worker's ordinal and the worker count, from its health reply.
    private(set) var worker = (index: 0, count: 1)
    private var process: Process?
    private var ingestSocket: ZMQSocket?
    private var querySocket: ZMQSocket?
    private let ownsDirectory: Bool
    /// Events of the subscribers' readiness probes, from a source of their own.
    private var probeEvents = EventFactory(source: "probe-\(UUID().uuidString.prefix(8))")

    /// Starts receiptd and waits until it answers a health query.
    /// - Parameters:
    ///   - dataDirectory: reuse a directory (restart tests); nil makes a fresh one.
    ///   - arguments: extra flags for receiptd.
    ///   - environment: variables for receiptd, on top of the runner's (see `start`).
    init(dataDirectory: String? = nil, arguments: [String] = [], environment: [String: String] = [:]) throws {
        if let dataDirectory {
            self.dataDirectory = dataDirectory
            ownsDirectory = false
        } else {
            // ipc:// paths must stay under ~100 bytes, so keep the directory short.
            var template = Array("/tmp/rdit-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw IntegrationError("mkdtemp failed") }
            self.dataDirectory = String(cString: made)
            ownsDirectory = true
        }
        self.arguments = arguments
        self.environment = environment
        try start()
    }

    deinit {
        ingestSocket?.close()
        querySocket?.close()
        if let process, process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if ownsDirectory {
            try? FileManager.default.removeItem(atPath: dataDirectory)
        }
    }

    var ingestEndpoint: String { "ipc://\(dataDirectory)/ingest.sock" }
    var publishEndpoint: String { "ipc://\(dataDirectory)/updates.sock" }
    var queryEndpoint: String { "ipc://\(dataDirectory)/query.sock" }
    var ingestSubscribeEndpoint: String { "ipc://\(dataDirectory)/ingest-sub.sock" }

    /// Launches the binary (again, after `terminate` or `kill`) and waits for health.
    ///
    /// The daemon inherits the runner's environment without `HOSTNAME` and `RECEIPTD_*`
    /// (a CI runner in a pod named `runner-3`, or an exported setting, must not change what
    /// the tests start), then gets `environment`.
    func start() throws {
        let process = Process()
        process.executableURL = Self.binaryDirectory.appendingPathComponent("receiptd")
        process.arguments = ["--data-dir", dataDirectory, "--log-level", "warning"] + arguments
        process.environment = ProcessInfo.processInfo.environment
            .filter { $0.key != "HOSTNAME" && !$0.key.hasPrefix("RECEIPTD_") }
            .merging(environment) { $1 }
        let log =
            FileHandle(forWritingAtPath: "\(dataDirectory)/receiptd.stderr")
            ?? {
                _ = FileManager.default.createFile(atPath: "\(dataDirectory)/receiptd.stderr", contents: nil)
                return FileHandle(forWritingAtPath: "\(dataDirectory)/receiptd.stderr")!
            }()
        log.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = log
        try process.run()
        self.process = process
        try waitUntilHealthy()
    }

    private func waitUntilHealthy() throws {
        let deadline = Date().addingTimeInterval(Self.startDeadlineSeconds)
        while Date() < deadline {
            guard let process, process.isRunning else {
                throw IntegrationError("receiptd exited during start-up: \(standardError())")
            }
            if case .health(let health)? = try? query(.health, timeoutMilliseconds: 100) {
                worker = (health.workerIndex, health.workerCount)
                return
            }
            usleep(20_000)
        }
        kill9()
        throw IntegrationError(
            "receiptd did not answer health within \(Self.startDeadlineSeconds) s; killed: \(standardError())"
        )
    }

    /// What receiptd wrote to standard error so far (for failure messages).
    func standardError() -> String {
        (try? String(contentsOfFile: "\(dataDirectory)/receiptd.stderr", encoding: .utf8)) ?? ""
    }

    // MARK: - Clients

    /// Sends one batch and waits for its acknowledgement.
    func ingest(_ events: [Event]) throws -> IngestReply {
        try IngestReply.decode(try ingestRaw([EventBatchCodec.encode(events)]))
    }

    /// Sends every batch first, then waits for the acknowledgements, in order.
    func ingestPipelined(_ batches: [[Event]]) throws -> [IngestReply] {
        let socket = try connectedIngestSocket()
        for batch in batches {
            _ = try socket.send([[], EventBatchCodec.encode(batch)])
        }
        return try batches.map { _ in
            try IngestReply.decode(try receiveIngestReply(on: socket, timeoutMilliseconds: 5000))
        }
    }

    /// Sends raw body frames (after the empty delimiter) to the acknowledged ingest endpoint.
    func ingestRaw(_ body: [[UInt8]], timeoutMilliseconds: Int32 = 5000) throws -> [UInt8] {
        let socket = try connectedIngestSocket()
        _ = try socket.send([[]] + body)
        return try receiveIngestReply(on: socket, timeoutMilliseconds: timeoutMilliseconds)
    }

    private func connectedIngestSocket() throws -> ZMQSocket {
        if let ingestSocket { return ingestSocket }
        let socket = try ZMQSocket(context: context, type: .dealer)
        try socket.setLinger(milliseconds: 0)
        try socket.connect(ingestEndpoint)
        ingestSocket = socket
        return socket
    }

    private func receiveIngestReply(on socket: ZMQSocket, timeoutMilliseconds: Int32) throws -> [UInt8] {
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        guard let reply = try socket.receiveMultipart() else {
            throw IntegrationError("no ingest reply within \(timeoutMilliseconds) ms")
        }
        guard reply.count == 2, reply[0].isEmpty else {
            throw IntegrationError("ingest reply has \(reply.count) frames")
        }
        return reply[1]
    }

    /// Asks one query over REQ; a timeout discards the socket (a REQ that missed a reply is stuck).
    func query(_ query: Query, timeoutMilliseconds: Int32 = 5000) throws -> QueryReply {
        let socket =
            try querySocket
            ?? {
                let socket = try ZMQSocket(context: context, type: .req)
                try socket.setLinger(milliseconds: 0)
                try socket.connect(queryEndpoint)
                querySocket = socket
                return socket
            }()
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        _ = try socket.send([query.encode()])
        guard let reply = try socket.receiveMultipart(), let body = reply.last else {
            socket.close()
            querySocket = nil
            throw IntegrationError("no query reply within \(timeoutMilliseconds) ms")
        }
        return try QueryReply.decode(body)
    }

    /// The status of a message with display text for `viewer`.
    func status(_ conversation: String, _ message: String, viewer: Viewer) throws -> (MessageStatus, String) {
        let reply = try query(.messageStatus(conversation: conversation, message: message, viewer: viewer))
        guard case .messageStatus(let status, let text) = reply else {
            throw IntegrationError("unexpected reply \(reply)")
        }
        return (status, text)
    }

    /// The health reply.
    func health() throws -> Health {
        let reply = try query(.health)
        guard case .health(let health) = reply else { throw IntegrationError("unexpected health reply \(reply)") }
        return health
    }

    /// The value of a counter from the stats query (0 if absent).
    func counter(_ name: String, label: String = "") throws -> UInt64 {
        guard case .stats(let counters) = try query(.stats) else { throw IntegrationError("unexpected stats reply") }
        return counters.first { $0.name == name && $0.label == label }?.value ?? 0
    }

    /// Polls the stats query, back to back, until counter `name` reaches `value`; returns as
    /// soon as a reply shows it, so the caller acts on a state that is only microseconds old.
    /// - Throws: if it does not within `timeoutMilliseconds`.
    func waitForCounter(
        _ name: String,
        label: String = "",
        toReach value: UInt64,
        timeoutMilliseconds: Int = 10_000
    ) throws {
        let deadline = Date().addingTimeInterval(Double(timeoutMilliseconds) / 1000)
        var seen = try counter(name, label: label)
        while seen < value {
            guard Date() < deadline else {
                throw IntegrationError(
                    "\(name){\(label)} is \(seen) after \(timeoutMilliseconds) ms, expected \(value)"
                )
            }
            seen = try counter(name, label: label)
        }
    }

    /// A subscriber to one conversation's updates, attached by the publisher before it returns.
    ///
    /// Readiness is proven on the wire: the subscriber also follows a probe conversation of
    /// its own (owned by this worker), and probe messages are ingested, each a new message,
    /// until the subscriber receives a probe update: at most 100 tries of 50 ms.
    func subscribe(to conversation: String) throws -> Subscriber {
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
        try ingestProbe(.conversationUpserted(conversation: probe, kind: .direct, members: ["probe-a", "probe-b"]))
        for attempt in 1...100 {
            try ingestProbe(
                .messageSent(conversation: probe, message: "p\(attempt)", sender: "probe-a", isSystem: false)
            )
            if try subscriber.waitForProbe(timeoutMilliseconds: 50) { return subscriber }
        }
        throw IntegrationError("the publisher did not attach a subscriber within 100 probe messages")
    }

    private func ingestProbe(_ kind: EventKind) throws {
        let reply = try ingest([probeEvents.make(kind)])
        guard reply.results == [.accepted(held: false)] else { throw IntegrationError("probe event refused: \(reply)") }
    }

    // MARK: - Lifecycle

    /// Sends SIGTERM and waits for exit (see `waitForExit`).
    /// - Returns: the exit status.
    @discardableResult
    func terminate() throws -> Int32 {
        stopClients()
        signal(SIGTERM)
        return try waitForExit()
    }

    /// The daemon process is alive.
    var isRunning: Bool { process?.isRunning ?? false }

    /// Sends a signal to the daemon, leaving the test's clients connected.
    func signal(_ signalNumber: Int32) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signalNumber)
    }

    /// Waits up to `stopDeadlineSeconds` for the daemon to exit.
    /// - Returns: its exit status, or 128 + the signal number if a signal ended it.
    /// - Throws: if it is still running at the deadline; it is then killed with SIGKILL.
    func waitForExit() throws -> Int32 {
        guard let process else { throw IntegrationError("receiptd was never started") }
        guard Self.waitForExit(of: process, seconds: Self.stopDeadlineSeconds) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw IntegrationError(
                "receiptd did not exit within \(Self.stopDeadlineSeconds) s; killed: \(standardError().suffix(2000))"
            )
        }
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    /// Polls until `process` has exited.
    /// - Returns: false if it still runs after `seconds`.
    static func waitForExit(of process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            if Date() >= deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// Sends SIGKILL and waits for the process to be gone.
    func kill9() {
        stopClients()
        guard let process else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    private func stopClients() {
        ingestSocket?.close()
        ingestSocket = nil
        querySocket?.close()
        querySocket = nil
    }
}
