import ReceiptLog
import ReceiptsCore

/// What an ``IngestScheduler`` asks of its owner and tells it: the ingest sockets, the
/// outbox's durability and the callers. `ClientLoop` in service; a recording fake in tests.
protocol IngestEnvironment: AnyObject {
    /// Makes sure frames can go to a worker: a NOT_OWNER answer may name one above the routing
    /// count (a scale-up's new worker).
    /// - Returns: false if the cluster cannot name the worker, or its sockets could not be made.
    func reach(_ worker: Int) -> Bool

    /// Puts a frame on a worker's ingest socket without waiting.
    /// - Parameters:
    ///   - tag: The frame's tag, returned with its acknowledgement.
    ///   - body: The `EventBatch`.
    ///   - worker: The worker's ordinal.
    ///   - member: Which member of the ordinal: an index into ``Cluster/members(of:)``.
    /// - Returns: false if it could not be queued now.
    func transmit(tag: UInt64, body: [UInt8], to worker: Int, member: Int) -> Bool

    /// Whether the outbox record ending at `position` is durable (its events may leave).
    /// - Throws: ``ReceiptsClientError`` `.unavailable` if the outbox failed: the send fails.
    func isDurable(_ position: LogPosition) throws(ReceiptsClientError) -> Bool

    /// A send is done: every event answered, or the send failed as a whole.
    /// - Parameters:
    ///   - request: The send's request id.
    ///   - result: One outcome per event, in order, or the failure.
    ///   - outboxIDs: The ids of the send's events in the outbox, to forget now; empty for a
    ///     send that is not in the outbox.
    func answer(_ request: UInt64, _ result: Result<[EventOutcome], ReceiptsClientError>, outboxIDs: [EventID])
}
