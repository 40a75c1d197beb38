import Glibc
import ReceiptsReplication
import ReceiptsWire
import Synchronization
import ZeroMQ

/// What other threads tell the service loop (stop, re-read the keys), and what the loop tells
/// them (the worker count its log holds).
///
/// Each sender sets its flag and rings the doorbell; the loop takes the flags when it wakes.
final class ServiceControl: Sendable {
    private struct State {
        var stopRequested = false
        var leaveRequested = false
        var keyReloadRequested = false
        var workerCount: Int?
        var role: MemberRole?
        var primaryGate: ReplicationGate?
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

    /// Asks the running loop to end so that the member can take another role (a replicated
    /// member's standby loop when the primary changed, its primary loop when it was deposed).
    func requestLeave() {
        state.withLock { $0.leaveRequested = true }
        doorbell.ring()
    }

    /// Whether the running loop should end: a stop, or a leave not yet taken.
    var shouldLeave: Bool { state.withLock { $0.stopRequested || $0.leaveRequested } }

    /// Clears a leave request, before the next loop starts.
    func clearLeave() {
        state.withLock { $0.leaveRequested = false }
    }

    /// Waits until the doorbell rings or `milliseconds` pass (a member waiting for its role).
    func waitForWake(milliseconds: Int32) {
        var descriptor = pollfd(fd: doorbell.fileDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, milliseconds)
        doorbell.drain()
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

    /// Whether a leave was asked for and not yet taken (a stop alone does not count).
    var isLeaveRequested: Bool { state.withLock { $0.leaveRequested } }

    /// A replicated member's role, as its `ReplicatedMember` last took it, and `deposed` while
    /// its primary loop's lease lapsed (as `Health` says); nil for a worker without an elected
    /// role. Safe from any thread.
    var role: MemberRole? {
        get {
            state.withLock { state in
                guard state.role == .primary, let gate = state.primaryGate else { return state.role }
                return gate.refusal.primaryRole
            }
        }
        set { state.withLock { $0.role = newValue } }
    }

    /// The gate of the primary loop that runs, if one does: while its lease lapsed, the role is
    /// reported `deposed`.
    var primaryGate: ReplicationGate? {
        get { state.withLock { $0.primaryGate } }
        set { state.withLock { $0.primaryGate = newValue } }
    }

    /// The worker count the log holds, once recovered: what the worker serves by, whatever
    /// was configured, until a rebalance changes it.
    var workerCount: Int? {
        get { state.withLock { $0.workerCount } }
        set { state.withLock { $0.workerCount = newValue } }
    }
}
