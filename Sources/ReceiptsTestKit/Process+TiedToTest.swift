package import Foundation
import Synchronization

extension Process {
    /// `setpriv`, which util-linux (essential on Debian) installs.
    static let setprivPath = "/usr/bin/setpriv"

    /// Starts a child of another program (etcd, Prometheus) that is killed when the test
    /// process ends, however it ends: `setpriv --pdeathsig KILL` sets the parent-death signal
    /// and execs the program (same pid, so signals sent to ``processIdentifier`` reach it).
    ///
    /// The kernel sends that signal when the *thread* that started the child ends, and the
    /// threads of a test process come and go; so the child is started from one thread that
    /// lives as long as the process. (receiptd watches its parent itself: `--exit-with-parent`.)
    /// - Parameters:
    ///   - executable: The program.
    ///   - arguments: Its arguments.
    /// - Throws: What `run()` throws.
    package func runTiedToTest(_ executable: String, _ arguments: [String]) throws {
        executableURL = URL(fileURLWithPath: Self.setprivPath)
        self.arguments = ["--pdeathsig", "KILL", "--", executable] + arguments
        try LongLivedSpawner.shared.run(self)
    }
}

/// One thread, started once and never ended, that starts child processes.
private final class LongLivedSpawner: Sendable {
    static let shared = LongLivedSpawner()

    private struct Request: @unchecked Sendable {
        var process: Process
        var finish: @Sendable (Result<Void, any Error>) -> Void
    }

    private let requests = Mutex<[Request]>([])
    private let pending = DispatchSemaphore(value: 0)

    private init() {
        let thread = Thread { [self] in
            while true {
                pending.wait()
                guard let request = requests.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                request.finish(Result { try request.process.run() })
            }
        }
        thread.name = "test-spawner"
        thread.start()
    }

    /// Runs `process` on the spawning thread and waits until it started (or failed to).
    func run(_ process: Process) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        requests.withLock {
            $0.append(
                Request(process: process) { result in
                    outcome.withLock { $0 = result }
                    done.signal()
                }
            )
        }
        pending.signal()
        done.wait()
        try outcome.withLock { $0 }?.get()
    }
}
