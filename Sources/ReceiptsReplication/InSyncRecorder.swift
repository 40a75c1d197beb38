import Synchronization

/// Writes a primary's in-sync set to the coordination service for the shipping thread
/// (deploy/REPLICATION.md, section 5.3), one write at a time, off that thread: `propose` starts a
/// write unless one is under way, and the shipper takes what was confirmed at its next turn.
package final class InSyncRecorder: Sendable {
    private struct State {
        var inFlight = false
        var confirmed: Set<String>?
    }

    private let state = Mutex(State())
    private let write: @Sendable (Set<String>) async -> Bool
    /// Wakes the shipping thread when a write ends.
    private let wake: @Sendable () -> Void

    /// - Parameters:
    ///   - write: Records a set, guarded by this member's leadership; false when it was not
    ///     written (the member is no longer primary, or the service is unreachable).
    ///   - wake: Rings the shipping thread's doorbell.
    package init(write: @escaping @Sendable (Set<String>) async -> Bool, wake: @escaping @Sendable () -> Void) {
        self.write = write
        self.wake = wake
    }

    /// Starts recording `set`, unless a write is under way (the shipper proposes again later).
    package func propose(_ set: Set<String>) {
        let start = state.withLock { state in
            guard !state.inFlight else { return false }
            state.inFlight = true
            return true
        }
        guard start else { return }
        Task {
            let written = await write(set)
            self.state.withLock { state in
                state.inFlight = false
                if written { state.confirmed = set }
            }
            self.wake()
        }
    }

    /// The set last confirmed recorded, once.
    package func takeConfirmed() -> Set<String>? {
        state.withLock { state in
            defer { state.confirmed = nil }
            return state.confirmed
        }
    }
}
