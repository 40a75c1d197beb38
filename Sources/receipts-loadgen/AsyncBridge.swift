import Dispatch
import Synchronization

/// The one place where the harness's synchronous, thread-based code waits for async work
/// (ReceiptsClient's methods): the work runs in a detached task, the calling thread blocks on
/// a semaphore until it is done.
///
/// Only the harness's own threads call this (the command's thread, never a task), so no
/// thread of Swift's cooperative pool is ever blocked by it.
enum AsyncBridge {
    /// Runs `operation` in a detached task and blocks the calling thread until it finishes.
    /// - Parameters:
    ///   - timeoutSeconds: After this long the task is cancelled (ReceiptsClient then answers
    ///     `.cancelled` at once) and the call throws a timeout; nil waits as long as it takes.
    ///   - operation: The async work.
    /// - Returns: What `operation` returned.
    /// - Throws: What `operation` threw, or a `LoadgenError` `.timeout`.
    static func wait<Value: Sendable>(
        timeoutSeconds: Double? = nil,
        _ operation: @escaping @Sendable () async throws -> Value
    ) throws -> Value {
        let box = ResultBox<Value>()
        let task = Task.detached {
            let result: Result<Value, any Error>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            box.result.withLock { $0 = result }
            box.done.signal()
        }
        if let timeoutSeconds, box.done.wait(timeout: .now() + timeoutSeconds) == .timedOut {
            task.cancel()
            box.done.wait()
            if case .success(let value)? = box.result.withLock({ $0 }) { return value }
            throw LoadgenError(.timeout, "no answer within \(timeoutSeconds) s")
        } else if timeoutSeconds == nil {
            box.done.wait()
        }
        guard let result = box.result.withLock({ $0 }) else {
            throw LoadgenError(.system, "the bridged task ended without a result")
        }
        return try result.get()
    }
}

/// Carries a task's result to the thread waiting for it.
private final class ResultBox<Value: Sendable>: Sendable {
    let result = Mutex<Result<Value, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
}
