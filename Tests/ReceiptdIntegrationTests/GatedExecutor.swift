import Dispatch
import Synchronization

/// A task executor that runs a given number of jobs, then holds the rest until ``open()``: a
/// test stops a task at a suspension point, as a busy thread pool might, and lets it go later.
final class GatedExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "gated-executor")
    private let state: Mutex<(permits: Int, held: [UnownedJob])>

    /// - Parameter permits: How many jobs run before the gate closes.
    init(permits: Int) {
        state = Mutex((permits, []))
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let runsNow = state.withLock { state in
            guard state.permits > 0 else {
                state.held.append(job)
                return false
            }
            state.permits -= 1
            return true
        }
        if runsNow { run(job) }
    }

    /// Runs the held jobs and every later one.
    func open() {
        let held = state.withLock { state in
            state.permits = .max
            defer { state.held = [] }
            return state.held
        }
        for job in held { run(job) }
    }

    private func run(_ job: UnownedJob) {
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
