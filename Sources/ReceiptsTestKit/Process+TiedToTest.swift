package import Foundation
import Synchronization

extension Process {
    /// `setpriv`, which util-linux (essential on Debian) installs.
    static let setprivPath = "/usr/bin/setpriv"

    /// Starts the configured process on the test kit's one spawning thread, after every start
    /// asked for before it: how a test process starts every child.
    ///
    /// Foundation hands each child the end of a socket whose closing tells it that the child
    /// ended, and keeps it out of other children by closing, in each new child, the descriptors
    /// open when that child's start began. A socket made by a start on another thread in
    /// between is inherited, and the first child's end is then seen only once both exited:
    /// `waitUntilExit` hangs on a process killed long ago (a zombie nobody reaps). Starts one at
    /// a time leave no "in between".
    /// - Throws: What `run()` throws.
    package func runInTurn() throws {
        try ChildSpawner.shared.run(self)
    }

    /// Starts a child of another program (etcd, Prometheus) that is killed when the test
    /// process ends, however it ends: `setpriv --pdeathsig KILL` sets the parent-death signal
    /// and execs the program (same pid, so signals sent to ``processIdentifier`` reach it).
    ///
    /// The kernel sends that signal when the *thread* that started the child ends (prctl(2)),
    /// and the spawning thread of ``runInTurn()`` lives as long as the process.
    /// (receiptd watches its parent itself: `--exit-with-parent`.)
    /// - Parameters:
    ///   - executable: The program.
    ///   - arguments: Its arguments.
    /// - Throws: What `run()` throws.
    package func runTiedToTest(_ executable: String, _ arguments: [String]) throws {
        executableURL = URL(fileURLWithPath: Self.setprivPath)
        self.arguments = ["--pdeathsig", "KILL", "--", executable] + arguments
        try runInTurn()
    }
}

/// One thread, started once and never ended, that starts child processes one at a time.
private final class ChildSpawner: Sendable {
    static let shared = ChildSpawner()

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
