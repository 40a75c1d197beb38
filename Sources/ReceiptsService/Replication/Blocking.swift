import Dispatch

/// Runs async coordinator calls from the worker's own thread (never one of Swift's cooperative
/// pool): the call runs in a task, the thread waits on a semaphore.
enum Blocking {
    /// Runs `operation` and blocks the calling thread until it returns.
    ///
    /// - Throws: What `operation` throws.
    static func run<Value: Sendable, Failure: Error>(
        _ operation: @escaping @Sendable () async throws(Failure) -> Value
    ) throws(Failure) -> Value {
        let done = DispatchSemaphore(value: 0)
        let box = ResultBox<Value, Failure>()
        Task {
            do throws(Failure) {
                box.result = .success(try await operation())
            } catch {
                box.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        return try box.result!.get()
    }

    /// Carries the task's result to the waiting thread (the semaphore orders the accesses).
    private final class ResultBox<Value, Failure: Error>: @unchecked Sendable {
        var result: Result<Value, Failure>?
    }
}
