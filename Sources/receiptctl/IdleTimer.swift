import Synchronization

/// Ends `tail` after a stretch without updates (`--idle-timeout-ms`).
final class IdleTimer: Sendable {
    private let timeout: Duration
    /// When the current stretch started: the timer's creation or the last ``reset()``.
    private let lastActivity: Mutex<ContinuousClock.Instant>

    init(timeout: Duration) {
        self.timeout = timeout
        lastActivity = Mutex(.now)
    }

    /// Starts a new stretch: an update came.
    func reset() {
        lastActivity.withLock { $0 = .now }
    }

    /// Returns once `timeout` passed without a ``reset()``, or when the task is cancelled.
    func expiry() async {
        while true {
            let deadline = lastActivity.withLock { $0 } + timeout
            if ContinuousClock.now >= deadline { return }
            do {
                try await Task.sleep(until: deadline, clock: .continuous)
            } catch {
                return
            }
        }
    }
}
