import Synchronization
import ZeroMQ

/// What other threads tell the service loop (stop, re-read the keys), and what the loop tells
/// them (the worker count its log holds).
///
/// Each sender sets its flag and rings the doorbell; the loop takes the flags when it wakes.
final class ServiceControl: Sendable {
    private struct State {
        var stopRequested = false
        var keyReloadRequested = false
        var workerCount: Int?
    }

    private let state = Mutex(State())
    let doorbell: Doorbell

    init(doorbell: Doorbell) {
        self.doorbell = doorbell
    }

    /// Asks the loop to shut down gracefully.
    func requestStop() {
        state.withLock { $0.stopRequested = true }
        doorbell.ring()
    }

    /// Asks the loop to re-read the CURVE allowlists.
    func requestKeyReload() {
        state.withLock { $0.keyReloadRequested = true }
        doorbell.ring()
    }

    /// Whether a key reload was asked for since the last call.
    func takeKeyReload() -> Bool {
        state.withLock { state in
            defer { state.keyReloadRequested = false }
            return state.keyReloadRequested
        }
    }

    var isStopRequested: Bool { state.withLock { $0.stopRequested } }

    /// The worker count the log holds, once recovered: what the worker serves by, whatever
    /// was configured, until a rebalance changes it.
    var workerCount: Int? {
        get { state.withLock { $0.workerCount } }
        set { state.withLock { $0.workerCount = newValue } }
    }
}
