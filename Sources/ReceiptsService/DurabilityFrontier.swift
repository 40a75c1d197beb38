import ReceiptLog
import ReceiptsReplication

/// The position up to which what the pipeline appended counts as acknowledged-durable: a
/// reply or a published status waits until the frontier covers everything it saw.
///
/// Without replication it is the log's durable position, under the log's fsync policy. With
/// `--replication-ack standby` it is "durable here and on every in-sync standby" (the
/// `ReplicationGate`, deploy/REPLICATION.md section 5.2), in this one place: the pipeline's
/// `reply`, `completeDurable` and `completeDurableIfDue` ask nothing else. Read on the hot path,
/// so it costs one or two atomic loads, no lock, no allocation.
struct DurabilityFrontier: Sendable {
    private let log: ReceiptLog
    private let gate: ReplicationGate?

    /// A frontier that is the log's durable position, held back to the gate's when there is one.
    init(log: ReceiptLog, gate: ReplicationGate? = nil) {
        self.log = log
        self.gate = gate
    }

    /// Everything at or before this position is acknowledged-durable.
    var position: LogPosition {
        guard let gate else { return log.durablePosition }
        return LogPosition(offset: min(log.durablePosition.offset, gate.replicatedPosition))
    }

    /// Why new ingest must be refused now, if it must: no standby in sync under the `stall`
    /// fallback, or a lease that was not renewed in time.
    var ingestRefusal: ReplicationGate.Refusal {
        gate?.refusal ?? .none
    }
}
