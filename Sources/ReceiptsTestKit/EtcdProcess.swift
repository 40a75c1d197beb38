import Foundation

/// A real etcd (Debian's `etcd-server` 3.4, `/usr/bin/etcd`) on loopback, for the tests that
/// run the coordinators against the service they use in production (deploy/REPLICATION.md,
/// section 16): a single member on free ports, its data in a temporary directory removed when
/// this object goes, every wait bounded.
///
/// ``stop()``, ``kill()``, ``pause()`` and ``resume()`` are what the failure tests do to it;
/// ``restart()`` brings it back on the same ports and data directory.
///
/// `@unchecked Sendable`: one thread at a time drives it (made in a task, then used by the test
/// or the bench that awaited it).
package final class EtcdProcess: @unchecked Sendable {
    /// How long etcd may take to answer `/health` after it is launched. It usually takes under a
    /// second; but `/health` is a quorum read through etcd's log, so an fsync, with etcd's own
    /// 1 s timeout, and while the other tests' fsyncs queue on the same disk (a fresh CI machine
    /// at the start of the parallel run) every read can time out for more than 10 s. The deadline
    /// only bounds a failure.
    package static let startDeadlineSeconds = 30.0

    /// How long one `/health` request may take: longer than etcd's own 1 s timeout of its read.
    static let healthRequestMilliseconds = 3000

    /// The etcd binary: `RECEIPTD_ETCD_BIN`, else Debian's.
    package static let binaryPath = ProcessInfo.processInfo.environment["RECEIPTD_ETCD_BIN"] ?? "/usr/bin/etcd"

    /// `http://127.0.0.1:<port>`: where clients talk to it.
    package private(set) var clientURL: String
    /// The temporary directory holding its data (`data/`) and its output (`etcd.log`).
    package let directory: String
    private var arguments: [String]
    private var process: Process?

    /// Launches etcd and waits until it answers `/health`.
    ///
    /// - Throws: `TestKitError` when etcd is not installed, cannot be started, exits, or does not
    ///   answer within ``startDeadlineSeconds`` (its output in the message).
    package init() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binaryPath) else {
            throw TestKitError(
                .process,
                "\(Self.binaryPath) is not installed; run deploy/install-deps.sh (Debian package etcd-server)"
            )
        }
        directory = try TemporaryDirectory.make(prefix: "etcd")
        // A free port can be taken by another test between its pick and etcd's bind: pick again.
        var attempt = 1
        while true {
            let clientPort = try LoopbackPort.free()
            let peerPort = try LoopbackPort.free()
            clientURL = "http://127.0.0.1:\(clientPort)"
            let peerURL = "http://127.0.0.1:\(peerPort)"
            arguments = [
                "--name", "default",
                "--data-dir", "\(directory)/data",
                "--listen-client-urls", clientURL,
                "--advertise-client-urls", clientURL,
                "--listen-peer-urls", peerURL,
                "--initial-advertise-peer-urls", peerURL,
                "--initial-cluster", "default=\(peerURL)",
                "--log-level", "error",
            ]
            do {
                try await launch()
                return
            } catch {
                kill()
                if attempt < 3, log().contains("address already in use") {
                    attempt += 1
                    try? FileManager.default.removeItem(atPath: "\(directory)/data")
                    continue
                }
                try? FileManager.default.removeItem(atPath: directory)
                throw error
            }
        }
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The file its standard output and error go to.
    package var logPath: String { "\(directory)/etcd.log" }

    /// What etcd wrote so far (for failure messages).
    package func log() -> String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    /// Whether the process is alive (paused counts as alive).
    package var isRunning: Bool { process?.isRunning ?? false }

    /// SIGTERM (SIGCONT first, should it be paused) and wait; SIGKILL after 5 s. Its data stays
    /// until this object goes, for ``restart()``.
    package func stop() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGCONT)
        Glibc.kill(process.processIdentifier, SIGTERM)
        if !process.waitForExit(seconds: 5) { kill() }
    }

    /// SIGKILL and wait: nothing is flushed.
    package func kill() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGSTOP: etcd stops answering, its connections stay open (as behind a partition).
    package func pause() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGSTOP)
    }

    /// SIGCONT after ``pause()``.
    package func resume() {
        guard let process, process.isRunning else { return }
        Glibc.kill(process.processIdentifier, SIGCONT)
    }

    /// Starts etcd again on the same ports and data directory (after ``stop()`` or ``kill()``)
    /// and waits until it answers.
    ///
    /// - Throws: `TestKitError` as ``init()``.
    package func restart() async throws {
        kill()
        try await launch()
    }

    private func launch() async throws {
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
            let output = FileHandle(forWritingAtPath: logPath)
        else {
            throw TestKitError(.system, "cannot create \(logPath)")
        }
        output.seekToEndOfFile()
        let process = Process()
        // etcd reads ETCD_* variables as flags; none of the caller's may change this one.
        process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("ETCD_") }
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.runTiedToTest(Self.binaryPath, arguments)
        } catch {
            throw TestKitError(.process, "cannot start \(Self.binaryPath)", cause: error)
        }
        try? output.close()
        self.process = process
        try await waitUntilHealthy()
    }

    private func waitUntilHealthy() async throws {
        let deadline = Date().addingTimeInterval(Self.startDeadlineSeconds)
        guard let port = URL(string: clientURL)?.port else {
            throw TestKitError(.process, "\(clientURL) names no port")
        }
        while Date() < deadline {
            guard let process, process.isRunning else {
                throw TestKitError(.process, "etcd exited with status \(process?.exitStatus ?? -1): \(log())")
            }
            let response = LoopbackHTTP.get(
                port: port,
                path: "/health",
                timeoutMilliseconds: Self.healthRequestMilliseconds
            )
            if let response, response.status == 200, response.body.contains("\"health\":\"true\"") {
                return
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw TestKitError(
            .timeout,
            "etcd did not answer \(clientURL)/health within \(Self.startDeadlineSeconds) s: \(log())"
        )
    }
}

/// Free TCP ports on loopback.
package enum LoopbackPort {
    /// A port free on 127.0.0.1 now (bound to 0, read back, released): another process may take
    /// it before the caller binds it, which the loopback tests accept.
    ///
    /// - Throws: `TestKitError` `.system` when no socket can be bound.
    package static func free() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestKitError(.system, "socket failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw TestKitError(.system, "cannot bind a loopback port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
