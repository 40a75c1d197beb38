import Dispatch
import Foundation
import Synchronization

/// The one place where synchronous, thread-based code waits for async work (`ReceiptsClient`'s
/// methods): the work runs in a task, the calling thread blocks on a semaphore until it is done.
///
/// The tests start and stop daemons synchronously (in initialisers and between steps) and the
/// load generator drives them from its command's thread, but both talk to them through
/// `ReceiptsClient`, whose API is async. A blocked caller may hold one of the cooperative pool's
/// few threads; if the awaited task needed one too, callers doing the same in parallel could
/// deadlock. So by default the task prefers an executor of its own, a serial queue outside the
/// pool, and only the client's loop thread resumes it.
package enum BlockingWait {
    /// A serial dispatch queue, whose thread is not one of the cooperative pool's.
    package static let serialExecutor: any TaskExecutor = QueueTaskExecutor(label: "receipts-test-kit.blocking-wait")

    /// A serial executor of its own, outside the cooperative pool, for long CPU-bound work in a
    /// test (the cluster simulation's seeds), so that it does not take one of the pool's few
    /// threads for a minute from every other test.
    /// - Parameter label: Its queue's name.
    package static func ownExecutor(label: String) -> any TaskExecutor {
        QueueTaskExecutor(label: label)
    }

    /// Runs `operation` and blocks the calling thread until it returns.
    /// - Parameters:
    ///   - seconds: How long to wait; the operation is then cancelled (a cancelled
    ///     `ReceiptsClient` call answers at once). Nil waits as long as it takes.
    ///   - executor: Where the task prefers to run: ``serialExecutor``, or
    ///     `globalConcurrentExecutor` for work that fans out into many child tasks and is
    ///     called only from a thread outside the pool.
    ///   - operation: The async work.
    /// - Returns: What `operation` returned.
    /// - Throws: What `operation` threw, or `TestKitError` `.timeout` if it did not finish in time.
    package static func run<Value: Sendable>(
        seconds: Double? = nil,
        executor: any TaskExecutor = serialExecutor,
        _ operation: @escaping @Sendable () async throws -> Value
    ) throws -> Value {
        let outcome = Outcome<Value>()
        let task = Task(executorPreference: executor) {
            do {
                outcome.finish(.success(try await operation()))
            } catch {
                outcome.finish(.failure(error))
            }
        }
        if let seconds {
            if outcome.done.wait(timeout: .now() + seconds) == .timedOut {
                task.cancel()
                // A cancelled client call answers at once; wait a moment for it, not forever.
                if outcome.done.wait(timeout: .now() + 1) == .success, case .success(let value)? = outcome.result {
                    return value
                }
                throw TestKitError(.timeout, "the operation did not finish within \(seconds) s")
            }
        } else {
            outcome.done.wait()
        }
        guard let result = outcome.result else {
            throw TestKitError(.system, "the operation finished without a result")
        }
        return try result.get()
    }
}

extension BlockingWait {
    /// The other way round: runs blocking work (a daemon's start-up, its exit) on a thread of
    /// its own and awaits it, so that the cooperative pool's few threads (two on a 2-core
    /// machine) go on running every other test's tasks meanwhile.
    /// - Parameter work: The blocking work.
    /// - Returns: What `work` returned.
    /// - Throws: What `work` threw.
    package static func onOwnThread<Value: Sendable>(
        _ work: @escaping @Sendable () throws -> Value
    ) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try work() }) }
            thread.name = "test-blocking"
            thread.start()
        }
    }
}

/// Where the task leaves its result for the blocked caller.
private final class Outcome<Value: Sendable>: Sendable {
    let done = DispatchSemaphore(value: 0)
    private let stored = Mutex<Result<Value, any Error>?>(nil)

    var result: Result<Value, any Error>? { stored.withLock { $0 } }

    func finish(_ result: Result<Value, any Error>) {
        stored.withLock { $0 = result }
        done.signal()
    }
}

/// Runs jobs on a serial dispatch queue, whose thread is not one of the cooperative pool's.
private final class QueueTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
