import Foundation
import ReceiptsClient
import ReceiptsTestKit
import ReceiptsWire
import ZeroMQ

/// A `receiptd` child process on a fresh short data directory under /tmp (ipc:// paths must
/// stay under ~100 bytes), started by the kit's `ReceiptdLauncher` from the directory this
/// executable was built into.
final class DaemonProcess {
    var dataDirectory: String { launcher.dataDirectory }
    let arguments: [String]
    /// The keys every harness client of this receiptd uses, when it runs with CURVE.
    let clientKeys: CurveClientKeys?
    private let launcher: ReceiptdLauncher
    private let context: ZMQContext
    private var currentClient: ReceiptsClient?

    /// The client the harness asks this receiptd's queries through (health, stats, compact),
    /// made anew at each start once receiptd is listening.
    var client: ReceiptsClient {
        guard let currentClient else { preconditionFailure("a DaemonProcess always has a client once made") }
        return currentClient
    }

    /// The daemon's default endpoints under its data directory.
    private var endpoints: WorkerEndpoints { WorkerEndpoints(dataDirectory: dataDirectory) }
    var ingestEndpoint: String { endpoints.ingest }
    var ingestSubscribeEndpoint: String { endpoints.ingestSubscribe }
    var publishEndpoint: String { endpoints.publish }
    var queryEndpoint: String { endpoints.query }
    var processIdentifier: Int32 { launcher.processIdentifier }

    /// Makes a fresh data directory and starts receiptd on it.
    /// - Parameters:
    ///   - curve: Run receiptd with CURVE on: a server key pair and one client key pair,
    ///     listed for every role, are made in the data directory.
    ///   - binary: Another build's receiptd; nil for this build's.
    init(context: ZMQContext, arguments: [String] = [], curve: Bool = false, binary: URL? = nil) throws {
        let dataDirectory = try TemporaryDirectory.make(prefix: "rb")
        launcher = ReceiptdLauncher(dataDirectory: dataDirectory, binary: binary)
        self.context = context
        if curve {
            let (keys, curveArguments) = try Self.makeKeys(in: dataDirectory)
            clientKeys = keys
            self.arguments = arguments + curveArguments
        } else {
            clientKeys = nil
            self.arguments = arguments
        }
        _ = try start()
    }

    /// Writes a server secret key and one client public key as the gateway, reader and operator list.
    /// - Returns: The client's keys and receiptd's CURVE flags.
    private static func makeKeys(in directory: String) throws -> (CurveClientKeys, [String]) {
        let server = try CurveKey.makePair()
        let client = try CurveKey.makePair()
        try Data("\(server.secretKey.z85)\n".utf8).write(to: URL(fileURLWithPath: "\(directory)/server.key"))
        try Data("\(client.publicKey.z85) receipts-loadgen\n".utf8)
            .write(to: URL(fileURLWithPath: "\(directory)/clients.keys"))
        let keys = CurveClientKeys(
            serverPublicKey: server.publicKey,
            publicKey: client.publicKey,
            secretKey: client.secretKey
        )
        let list = "\(directory)/clients.keys"
        return (
            keys,
            [
                "--curve-secret-key-file", "\(directory)/server.key", "--curve-gateway-keys", list,
                "--curve-reader-keys", list, "--curve-operator-keys", list,
            ]
        )
    }

    deinit {
        launcher.kill9()
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    /// Launches receiptd and waits until it answers a health query.
    ///
    /// The client is made only once receiptd has bound its query endpoint: one connected
    /// before would reach it on libzmq's next reconnect attempt (every 100 ms), which would
    /// round every restart time up by as much.
    /// - Returns: Seconds from launch to the first health answer (the restart time).
    @discardableResult
    func start(timeoutSeconds: Double = 600) throws -> Double {
        if let currentClient {
            self.currentClient = nil
            try BlockingWait.run { await currentClient.shutdown() }
        }
        // A socket file left by a killed receiptd would look like a bound endpoint.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
        for name in names where name.hasSuffix(".sock") {
            try? FileManager.default.removeItem(atPath: "\(dataDirectory)/\(name)")
        }
        // Metrics are served on a free port (the launcher's), so no bench daemon collides with a
        // running one.
        let started = Monotonic.now()
        try launcher.launch(arguments: ["--log-level", "warning", "--compact-interval-s", "0"] + arguments)
        let deadline = started + UInt64(timeoutSeconds * 1e9)
        let querySocketPath = String(queryEndpoint.dropFirst("ipc://".count))
        while !FileManager.default.fileExists(atPath: querySocketPath) {
            guard launcher.isRunning else {
                throw LoadgenError(.process, "receiptd exited during start-up: \(standardError())")
            }
            guard Monotonic.now() < deadline else {
                throw LoadgenError(.timeout, "receiptd did not bind \(queryEndpoint) within \(timeoutSeconds) s")
            }
            usleep(1000)
        }
        let client = try ReceiptsClient.harness(
            worker: Cluster.Worker(ingest: ingestEndpoint, query: queryEndpoint, publish: publishEndpoint),
            queryTimeoutMilliseconds: Self.compactionTimeoutMilliseconds,
            curve: clientKeys
        )
        currentClient = client
        let remaining = max(Monotonic.seconds(from: Monotonic.now(), to: deadline), 1)
        _ = try BlockingWait.run(seconds: remaining) { try await client.health(worker: 0) }
        return Monotonic.seconds(from: started, to: Monotonic.now())
    }

    /// Long enough for a compaction of the largest state the harness builds.
    static let compactionTimeoutMilliseconds = 300_000

    /// What receiptd wrote to standard error (for failure messages).
    func standardError() -> String {
        launcher.standardError()
    }

    /// Resident memory of the process in bytes (VmRSS).
    func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(processIdentifier)/status", encoding: .utf8) else {
            return 0
        }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return kilobytes * 1024
        }
        return 0
    }

    /// Bytes of the files in the data directory (log segments and snapshots).
    func diskBytes() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dataDirectory)) ?? []
        return names.filter { !$0.hasSuffix(".sock") && !$0.hasSuffix(".stderr") }.reduce(0) { total, name in
            let attributes = try? FileManager.default.attributesOfItem(atPath: "\(dataDirectory)/\(name)")
            return total + ((attributes?[.size] as? NSNumber)?.intValue ?? 0)
        }
    }

    /// SIGKILL and wait: nothing gets flushed or closed.
    func kill9() {
        launcher.kill9()
    }

    /// SIGTERM and wait: the graceful shutdown.
    func terminate() {
        launcher.terminate()
    }
}
