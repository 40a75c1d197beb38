package import ReceiptsWire
import Synchronization

/// What the primary's shipping thread tells its pipeline about replication (deploy/REPLICATION.md,
/// sections 5.2 and 7.3): the position durable on every standby that acknowledgements wait for,
/// and whether new ingest must be refused, and why.
///
/// Atomics: the shipping thread stores, the pipeline loads, on the hot path, with no lock.
package final class ReplicationGate: Sendable {
    /// Why new ingest is refused before it is applied.
    package enum Refusal: UInt8, Sendable {
        /// Ingest is taken.
        case none = 0
        /// No standby has been in sync for the timeout (`--replication-fallback stall`).
        case noStandbyInSync = 1
        /// This member's lease was not renewed in time: it may no longer be primary.
        case leaseExpired = 2
        /// This primary is handing the ordinal over (a switchover, section 12.2).
        case handingOver = 3

        /// The role a primary behind a gate that refuses so reports (`Health`, `/readyz`):
        /// `deposed` once its lease lapsed.
        package var primaryRole: MemberRole {
            self == .leaseExpired ? .deposed : .primary
        }
    }

    private let replicated: Atomic<UInt64>
    private let refusalValue = Atomic<UInt8>(Refusal.none.rawValue)
    /// Set by the loop for a hand-over, apart from the shipping thread's verdict.
    private let handingOver = Atomic<Bool>(false)
    /// Rings the pipeline's doorbell when the position moves.
    private let wake: @Sendable () -> Void

    /// A gate at `position`: what the primary may count as acknowledged before any standby
    /// confirmed anything (everything recovered, which was acknowledged before).
    package init(position: UInt64, wake: @escaping @Sendable () -> Void) {
        replicated = Atomic(position)
        self.wake = wake
    }

    /// Everything at or before it may be acknowledged: durable on every standby acknowledgements
    /// wait for (`UInt64.max` when none is waited for), and never past where it stood when the
    /// lease was last certainly alive.
    package var replicatedPosition: UInt64 {
        replicated.load(ordering: .acquiring)
    }

    /// Why new ingest is refused now, if it is.
    package var refusal: Refusal {
        if handingOver.load(ordering: .relaxed) { return .handingOver }
        return Refusal(rawValue: refusalValue.load(ordering: .relaxed)) ?? .none
    }

    /// Refuses new ingest while a hand-over runs (true), or takes it again (false).
    package func pauseIngest(_ paused: Bool) {
        handingOver.store(paused, ordering: .relaxed)
    }

    /// Stores the shipping thread's verdict and wakes the pipeline if the position moved.
    package func update(replicatedPosition position: UInt64, refusal: Refusal) {
        refusalValue.store(refusal.rawValue, ordering: .relaxed)
        let previous = replicated.exchange(position, ordering: .acquiringAndReleasing)
        if previous != position { wake() }
    }
}
