import Foundation
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// How receiptd finds its place among the workers from flags and the environment.
@Suite(.serialized, .startsProcesses)
struct ConfigurationTests {
    /// `--exit-with-parent` (which the tests' launcher sets): a daemon whose parent is gone
    /// exits on its own; without it, an orphan runs on. The parent here is a shell that starts
    /// receiptd and waits for it, killed with SIGKILL.
    @Test(arguments: [true, false])
    func anOrphanExitsWithExitWithParent(exitsWithParent: Bool) async throws {
        let directory = try TemporaryDirectory.make(prefix: "rdpw")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/bash")
        shell.arguments = [
            "-c", #""$0" --data-dir "$1" --http off > "$1/out" 2>&1 < /dev/null & echo $! > "$1/pid"; wait"#,
            ReceiptdLauncher.thisBuild.path, directory,
        ]
        shell.environment = ["RECEIPTD_EXIT_WITH_PARENT": exitsWithParent ? "1" : "0"]
        try shell.runInTurn()
        // Each wait below looks once more after its deadline: on a loaded machine a sleeping
        // task may wake only after it (the cooperative pool's few threads are busy).
        let pid = try await Self.poll(seconds: 30) {
            Int32(
                ((try? String(contentsOfFile: "\(directory)/pid", encoding: .utf8)) ?? "")
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            )
        }
        let daemon = try #require(pid, "the shell named no receiptd")
        defer {
            // Foundation sees the shell end only once every process holding what it gave the
            // shell is gone: the orphan too.
            kill(daemon, SIGKILL)
            _ = shell.waitForExit(seconds: 10)
        }
        // Started (its output says it serves) before its parent goes.
        let ready = try await Self.poll(seconds: 30) {
            ((try? String(contentsOfFile: "\(directory)/out", encoding: .utf8)) ?? "").contains(#""ready""#)
                ? true : nil
        }
        #expect(ready == true, "receiptd did not start")
        kill(shell.processIdentifier, SIGKILL)
        // Exited: no process, or a zombie its new parent has not reaped yet.
        let gone = try await Self.poll(seconds: 10) {
            ["?", "Z"].contains(Process.kernelState(of: daemon)) ? true : nil
        }
        #expect((gone ?? false) == exitsWithParent, "orphan \(daemon) gone: \(gone ?? false)")
    }

    /// What `probe` finds, polled every 20 ms for up to `seconds`, and once more at the end.
    private static func poll<Value>(seconds: Double, _ probe: () -> Value?) async throws -> Value? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let value = probe() { return value }
            try await Task.sleep(for: .milliseconds(20))
        }
        return probe()
    }

    @Test("HOSTNAME=debian-12 and no worker flags: worker 0 of 1 (the pod ordinal is opt-in)")
    func hostnameAloneIsNotAnOrdinal() async throws {
        let daemon = try await ReceiptdProcess(environment: ["HOSTNAME": "debian-12"])
        let health = try await daemon.health()
        #expect(health.workerIndex == 0)
        #expect(health.workerCount == 1)
    }

    @Test("RECEIPTD_WORKER_INDEX_FROM_HOSTNAME=1, HOSTNAME=receiptd-2, --worker-count 3: worker 2 of 3")
    func podOrdinalFromHostname() async throws {
        let daemon = try await ReceiptdProcess(
            arguments: ["--worker-count", "3"],
            environment: ["HOSTNAME": "receiptd-2", "RECEIPTD_WORKER_INDEX_FROM_HOSTNAME": "1"]
        )
        let health = try await daemon.health()
        #expect(health.workerIndex == 2)
        #expect(health.workerCount == 3)
    }

    @Test("A second receiptd on a data directory in use is refused, and the first serves on")
    func aDataDirectoryInUseIsRefused() async throws {
        let daemon = try await ReceiptdProcess()
        let endpoints = try TemporaryDirectory.make(prefix: "rdsd")
        defer { try? FileManager.default.removeItem(atPath: endpoints) }
        let second = ReceiptdLauncher.process(
            arguments: [
                "--data-dir", daemon.dataDirectory, "--http", "off",
                "--ingest", "ipc://\(endpoints)/ingest", "--ingest-sub", "ipc://\(endpoints)/ingest-sub",
                "--publish", "ipc://\(endpoints)/publish", "--query", "ipc://\(endpoints)/query",
            ]
        )
        let output = Pipe()
        second.standardError = output
        second.standardOutput = output
        try second.runInTurn()
        #expect(await second.exited(within: 15), "a refused start exits on its own")
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(second.terminationStatus != 0)
        #expect(text.contains("in use by another open log"), "\(text)")
        #expect(try await daemon.health().workerCount == 1)
        #expect(try await daemon.terminate() == 0)
    }

    @Test("A restart with other pending-receipt settings is refused unless the operator accepts the change")
    func replaySettingsAreKept() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--pending-limit", "10"])
        #expect(try await daemon.terminate() == 0)

        let changed = ReceiptdLauncher.process(arguments: ["--data-dir", daemon.dataDirectory, "--pending-limit", "20"])
        let output = Pipe()
        changed.standardError = output
        changed.standardOutput = output
        try changed.runInTurn()
        let exited = await changed.exited(within: 15)
        #expect(exited, "a refused start exits on its own")
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(changed.terminationStatus != 0)
        #expect(text.contains("pending_receipt_limit=10") && text.contains("pending_receipt_limit=20"), "\(text)")

        let accepted = try await ReceiptdProcess(
            dataDirectory: daemon.dataDirectory,
            arguments: ["--pending-limit", "20", "--accept-settings-change"]
        )
        #expect(try await accepted.health().workerCount == 1)
        #expect(try await accepted.terminate() == 0)
        let again = try await ReceiptdProcess(
            dataDirectory: daemon.dataDirectory,
            arguments: ["--pending-limit", "20"]
        )
        #expect(try await again.terminate() == 0, "the accepted settings are the recorded ones now")
    }
}
