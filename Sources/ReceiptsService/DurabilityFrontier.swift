import ReceiptLog

/// The position up to which what the pipeline appended counts as acknowledged-durable: a
/// reply or a published status waits until the frontier covers everything it saw.
///
/// Today it is the log's durable position, under the log's fsync policy. Replication moves it
/// to "durable here and on a standby" here, in one place: the pipeline's `reply`,
/// `completeDurable` and `completeDurableIfDue` ask nothing else. Read on the hot path, so it
/// stays what the log's position costs: one atomic load, no lock, no allocation.
struct DurabilityFrontier {
    private let log: ReceiptLog

    /// A frontier that is the log's durable position.
    init(log: ReceiptLog) {
        self.log = log
    }

    /// Everything at or before this position is acknowledged-durable.
    var position: LogPosition {
        log.durablePosition
    }
}
