import Foundation
import ReceiptsTestKit
import ReceiptsTestTraits
import Testing

/// The children the tests start of other programs (etcd, Prometheus) die with the test
/// process: started through `setpriv --pdeathsig KILL` from the kit's spawning thread, which
/// lives as long as the process, since the kernel sends the signal when the *thread* that
/// started a child ends (prctl(2)).
@Suite(.startsProcesses) struct TiedChildTests {
    /// A shell that touches `marker` once `setpriv` has set the signal, then becomes `sleep`.
    private static let arguments = ["-c", #": > "$0"; exec sleep 30"#]

    @Test func aTiedChildOutlivesTheThreadThatAskedForItWhereAPlainOneDies() async throws {
        let directory = try TemporaryDirectory.make(prefix: "rdtc")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The control: the same command started by a thread that then ends. The kernel kills
        // it, which is what would happen to etcd started from a test's passing thread.
        let plain = Process()
        plain.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        plain.arguments = ["--pdeathsig", "KILL", "--", "/bin/sh"] + Self.arguments + ["\(directory)/plain"]
        let tied = Process()
        defer {
            for process in [plain, tied] where process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        try await Self.startFromAnEndingThread(marker: "\(directory)/plain") { try plain.run() }
        try await Self.startFromAnEndingThread(marker: "\(directory)/tied") {
            try tied.runTiedToTest("/bin/sh", Self.arguments + ["\(directory)/tied"])
        }
        try await Task.sleep(for: .milliseconds(300))
        let plainState = Process.kernelState(of: plain.processIdentifier)
        #expect(["Z", "?"].contains(plainState), "the control outlived its thread (state \(plainState))")
        #expect(tied.isRunning, "killed when the thread that asked for it ended")
        let command = try String(contentsOfFile: "/proc/\(tied.processIdentifier)/comm", encoding: .utf8)
        #expect(command == "sleep\n", "setpriv and the shell exec the program in the same process")
    }

    /// Runs `start` on a thread of its own that ends once the child touched `marker` (so
    /// `setpriv` had set the signal while the thread lived), and waits for that end.
    private static func startFromAnEndingThread(
        marker: String,
        _ start: @escaping () throws -> Void
    ) async throws {
        let failure = ThreadFailure()
        nonisolated(unsafe) let start = start
        let thread = Thread {
            do {
                try start()
                let deadline = Date().addingTimeInterval(10)
                while !FileManager.default.fileExists(atPath: marker), Date() < deadline { usleep(1000) }
            } catch {
                failure.record(error)
            }
        }
        thread.start()
        while !thread.isFinished { try await Task.sleep(for: .milliseconds(5)) }
        if let error = failure.recorded { throw error }
        #expect(FileManager.default.fileExists(atPath: marker), "the child never ran its shell")
    }

    /// An error a thread met, read by the test once the thread ended.
    final class ThreadFailure: @unchecked Sendable {
        private let lock = NSLock()
        private var error: (any Error)?

        func record(_ error: any Error) { lock.withLock { self.error = error } }
        var recorded: (any Error)? { lock.withLock { error } }
    }
}
