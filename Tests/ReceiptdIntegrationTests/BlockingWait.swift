import Dispatch
import Synchronization

/// Waits for async work from synchronous code without needing Swift's cooperative thread pool.
///
/// `ReceiptdProcess` starts and stops daemons synchronously (tests do it in initialisers and
/// between steps) but talks to them through `ReceiptsClient`, whose API is async. The blocked
/// caller may hold one of the pool's few threads; if the awaited task needed one too, tests
/// doing the same in parallel could deadlock. So the task prefers an executor of its own, a
/// serial queue outside the pool, and only the client's loop thread resumes it.
enum BlockingWait {
    private static let executor = QueueTaskExecutor()

    /// Runs `operation` and blocks the calling thread until it returns.
    /// - Parameters:
    ///   - seconds: How long to wait; the operation is then cancelled.
    ///   - operation: The async work.
    /// - Returns: What `operation` returned.
    /// - Throws: What `operation` threw, or `IntegrationError` if it did not finish in time.
    static func run<Value: Sendable>(
        seconds: Double,
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
        if outcome.done.wait(timeout: .now() + seconds) == .timedOut {
            task.cancel()
            // A cancelled client call answers at once; wait a moment for it, not forever.
            if outcome.done.wait(timeout: .now() + 1) == .success, case .success(let value)? = outcome.result {
                return value
            }
            throw IntegrationError("the operation did not finish within \(seconds) s")
        }
        guard let result = outcome.result else { throw IntegrationError("the operation finished without a result") }
        return try result.get()
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
    private let queue = DispatchQueue(label: "receiptd-integration-tests.blocking-wait")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
