import Synchronization

/// What the primary's shipping thread tells its pipeline about replication (deploy/REPLICATION.md,
/// section 5.2): the position durable on every standby that acknowledgements wait for, and
/// whether new ingest must be refused because none is in sync.
///
/// Atomics: the shipping thread stores, the pipeline loads, on the hot path, with no lock.
final class ReplicationGate: Sendable {
    private let replicated: Atomic<UInt64>
    private let stalled = Atomic<Bool>(false)
    /// Rings the pipeline's doorbell when the position moves.
    private let wake: @Sendable () -> Void

    /// A gate at `position`: what the primary may count as acknowledged before any standby
    /// confirmed anything (everything recovered, which was acknowledged before).
    init(position: UInt64, wake: @escaping @Sendable () -> Void) {
        replicated = Atomic(position)
        self.wake = wake
    }

    /// Everything at or before it is durable on every standby acknowledgements wait for;
    /// `UInt64.max` when none is waited for (the `local` fallback).
    var replicatedPosition: UInt64 {
        replicated.load(ordering: .acquiring)
    }

    /// Whether no standby has been in sync for the timeout, under the `stall` fallback: new
    /// ingest is refused `UNAVAILABLE` before it is applied.
    var isStalled: Bool {
        stalled.load(ordering: .relaxed)
    }

    /// Stores the shipping thread's verdict and wakes the pipeline if the position moved.
    func update(replicatedPosition position: UInt64, stalled isStalled: Bool) {
        stalled.store(isStalled, ordering: .relaxed)
        let previous = replicated.exchange(position, ordering: .acquiringAndReleasing)
        if previous != position { wake() }
    }
}
