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
        port = try Self.freePort()
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

    /// A port the kernel just handed out on loopback (bind to 0, read it, close).
    private static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw LoadgenError(.system, "cannot find a free port: errno \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}
