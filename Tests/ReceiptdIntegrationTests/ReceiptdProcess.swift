import Foundation
import ReceiptsCore
import ReceiptsWire
import Testing
import ZeroMQ

/// A real `receiptd` child process on its own data directory, with clients for its endpoints.
///
/// Ingest goes through a DEALER (the gateway shape that pipelines), queries through a REQ
/// (the client shape the contract names). Every wait is bounded by a receive timeout.
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

    let dataDirectory: String
    let arguments: [String]
    var context: ZMQContext { Self.sharedContext }
    private var process: Process?
    private var ingestSocket: ZMQSocket?
    private var querySocket: ZMQSocket?
    private let ownsDirectory: Bool

    /// Starts receiptd and waits until it answers a health query.
    /// - Parameters:
    ///   - dataDirectory: reuse a directory (restart tests); nil makes a fresh one.
    ///   - arguments: extra flags for receiptd.
    init(dataDirectory: String? = nil, arguments: [String] = []) throws {
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
    func start() throws {
        let process = Process()
        process.executableURL = Self.binaryDirectory.appendingPathComponent("receiptd")
        process.arguments = ["--data-dir", dataDirectory, "--log-level", "warning"] + arguments
        let log = FileHandle(forWritingAtPath: "\(dataDirectory)/receiptd.stderr")
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
        for _ in 0..<150 {
            guard let process, process.isRunning else {
                throw IntegrationError("receiptd exited during start-up: \(standardError())")
            }
            if case .health? = try? query(.health, timeoutMilliseconds: 100) { return }
        }
        throw IntegrationError("receiptd did not answer health within 15 s: \(standardError())")
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

    /// Sends raw body frames (after the empty delimiter) to the acknowledged ingest endpoint.
    func ingestRaw(_ body: [[UInt8]], timeoutMilliseconds: Int32 = 5000) throws -> [UInt8] {
        let socket = try ingestSocket ?? {
            let socket = try ZMQSocket(context: context, type: .dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.connect(ingestEndpoint)
            ingestSocket = socket
            return socket
        }()
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        _ = try socket.send([[]] + body)
        guard let reply = try socket.receiveMultipart() else {
            throw IntegrationError("no ingest reply within \(timeoutMilliseconds) ms")
        }
        guard reply.count == 2, reply[0].isEmpty else { throw IntegrationError("ingest reply has \(reply.count) frames") }
        return reply[1]
    }

    /// Asks one query over REQ; a timeout discards the socket (a REQ that missed a reply is stuck).
    func query(_ query: Query, timeoutMilliseconds: Int32 = 5000) throws -> QueryReply {
        let socket = try querySocket ?? {
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
        guard case .messageStatus(let status, let text) = reply else { throw IntegrationError("unexpected reply \(reply)") }
        return (status, text)
    }

    /// The value of a counter from the stats query (0 if absent).
    func counter(_ name: String, label: String = "") throws -> UInt64 {
        guard case .stats(let counters) = try query(.stats) else { throw IntegrationError("unexpected stats reply") }
        return counters.first { $0.name == name && $0.label == label }?.value ?? 0
    }

    /// A subscriber to one conversation's updates, connected before it returns.
    func subscribe(to conversation: String) throws -> Subscriber {
        try Subscriber(context: context, endpoint: publishEndpoint, conversation: conversation)
    }

    // MARK: - Lifecycle

    /// Sends SIGTERM and waits for exit; returns the exit status.
    @discardableResult
    func terminate() -> Int32 {
        stopClients()
        guard let process else { return -1 }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
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

/// A SUB socket following one conversation's status updates.
final class Subscriber {
    let socket: ZMQSocket
    let topic: [UInt8]

    init(context: ZMQContext, endpoint: String, conversation: String) throws {
        socket = try ZMQSocket(context: context, type: .sub)
        try socket.setLinger(milliseconds: 0)
        topic = Array(Partitioning.topic(for: conversation).utf8)
        try socket.subscribe(topic)
        try socket.connect(endpoint)
        // The slow joiner: give the subscription time to reach the publisher. Correctness never
        // depends on it (sequences and snapshots repair gaps); it only keeps the tests direct.
        usleep(300_000)
    }

    deinit {
        socket.close()
    }

    /// The next update of this conversation, or nil after `timeoutMilliseconds` of silence.
    func next(timeoutMilliseconds: Int32 = 5000) throws -> StatusUpdate? {
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        while let frames = try socket.receiveMultipart() {
            guard frames.count == 2 else { throw IntegrationError("update has \(frames.count) frames") }
            if frames[0] == topic { return try StatusUpdate.decode(frames[1]) }
        }
        return nil
    }

    /// Reads updates until one satisfies `predicate`; returns every update read.
    func updates(until predicate: (StatusUpdate) -> Bool) throws -> [StatusUpdate] {
        var seen: [StatusUpdate] = []
        while let update = try next() {
            seen.append(update)
            if predicate(update) { return seen }
        }
        throw IntegrationError("no matching update within 5 s; saw \(seen.map { ($0.sequence, $0.status.status) })")
    }
}

/// A failed expectation about the running process.
struct IntegrationError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Builds events with a fixed source and increasing sequence numbers.
struct EventFactory {
    let source: String
    private(set) var sequence: UInt64 = 0

    init(source: String = "gw-\(UUID().uuidString.prefix(8))") {
        self.source = source
    }

    mutating func make(_ kind: EventKind, clientTime: Timestamp? = nil) -> Event {
        sequence += 1
        return Event(id: EventID(source: source, sequence: sequence), clientTime: clientTime, kind: kind)
    }
}
