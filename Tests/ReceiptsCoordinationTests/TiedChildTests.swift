import Foundation
import ReceiptsTestKit
import Testing

/// The children the tests start of other programs (etcd, Prometheus) die with the test
/// process: started through `setpriv --pdeathsig KILL` from a thread that lives as long as
/// the process, since the kernel sends the signal when the starting *thread* ends.
struct TiedChildTests {
    @Test func aTiedChildOutlivesTheThreadThatAskedForItAndIsTheProgram() async throws {
        let child = Process()
        child.standardInput = FileHandle.nullDevice
        let started = DispatchSemaphore(value: 0)
        let failure = ThreadFailure()
        // A thread of its own, ended before the child is looked at: prctl(2) says a child
        // started from it with the parent-death signal set is killed as it ends (the kernel
        // this was written on, 6.18, waits for the process).
        let asker = Thread {
            do {
                try child.runTiedToTest("/bin/sleep", ["30"])
            } catch {
                failure.record(error)
            }
            started.signal()
        }
        asker.start()
        started.wait()
        defer {
            if child.isRunning {
                kill(child.processIdentifier, SIGKILL)
                child.waitUntilExit()
            }
        }
        #expect(failure.recorded == nil)
        while !asker.isFinished { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(300))
        let pid = child.processIdentifier
        #expect(child.isRunning, "killed when the thread that asked for it ended")
        let command = try String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)
        #expect(command == "sleep\n", "setpriv execs the program in the same process")
    }

    /// An error a thread met, read by the test after the thread signalled.
    final class ThreadFailure: @unchecked Sendable {
        private let lock = NSLock()
        private var error: (any Error)?

        func record(_ error: any Error) { lock.withLock { self.error = error } }
        var recorded: (any Error)? { lock.withLock { error } }
    }
}
