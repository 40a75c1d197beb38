import Glibc
import ReceiptLog

/// A long-lived helper thread of the worker (`receiptd-pub`, `receiptd-ship`), started once by
/// its owner and joined when the owner stops it: nil before ``start(_:)``, after ``stop(telling:)``
/// and when the start failed, so that a stop never waits for a thread that never ran. Touched
/// only by the owner's thread.
struct JoinableThread {
    /// The thread's name (at most 15 bytes), in errors and in `top -H`.
    let name: String
    private let threads: ThreadStarter
    private var thread: pthread_t?

    /// - Parameters:
    ///   - name: The thread's name (at most 15 bytes).
    ///   - threads: Starts it.
    init(name: String, threads: ThreadStarter) {
        self.name = name
        self.threads = threads
    }

    /// Starts the thread running `run`, unless it runs already.
    /// - Throws: `ServiceError` with code `system`, naming the thread and the errno, if it
    ///   cannot be started.
    mutating func start(_ run: @escaping @Sendable () -> Void) throws(ServiceError) {
        guard thread == nil else { return }
        switch threads.start(name, run) {
        case .success(let started):
            thread = started
        case .failure(let failure):
            throw ServiceError(.system, "cannot start the \(name) thread", cause: failure)
        }
    }

    /// Asks the thread to end (`tell`) and waits until it has; returns at once if it is not
    /// running.
    mutating func stop(telling tell: () -> Void) {
        guard let thread else { return }
        self.thread = nil
        tell()
        pthread_join(thread, nil)
    }
}
