import Foundation
import Glibc
import ReceiptsTestKit

/// A redis-server child on 127.0.0.1 and a free port, in a temporary directory, with the
/// append-only file synced on every write (`appendfsync always`): the durability receiptd's
/// default gives.
final class RedisServer {
    let port: UInt16
    let directory: String
    private let process: Process

    /// Whether a redis-server binary is on the PATH (or at /usr/bin).
    static var executable: String? {
        let candidates = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").map {
            "\($0)/redis-server"
        }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts redis-server and waits until it answers PING.
    init(executable: String) throws {
        directory = try TemporaryDirectory.make(prefix: "rr")
        port = UInt16(try LoopbackPort.free())
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "--port", "\(port)", "--bind", "127.0.0.1", "--dir", directory, "--appendonly", "yes",
            "--appendfsync", "always", "--save", "", "--daemonize", "no", "--logfile", "\(directory)/redis.log",
        ]
        try process.run()
        let deadline = Monotonic.now() + 10_000_000_000
        while Monotonic.now() < deadline {
            if let connection = try? RESPConnection(port: port), (try? connection.command(["PING"])) == .simple("PONG")
            {
                return
            }
            usleep(20_000)
        }
        stop()
        throw LoadgenError(.timeout, "redis-server did not answer PING within 10 s")
    }

    deinit { stop() }

    /// Stops the server (SIGTERM, wait) and removes its directory.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }
}
