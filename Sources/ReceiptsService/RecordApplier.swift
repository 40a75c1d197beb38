import ReceiptLog
import ReceiptsCore
import ReceiptsReplication
import ReceiptsWire

/// Applies log records to an engine, at the times the log recorded: the one per-record switch
/// that recovery's replay and a standby's applier share (deploy/REPLICATION.md, section 4.1), so
/// that a standby's state is the state the primary's recovery would build from the same records.
///
/// Batches replay through the same engine code as live ingest; retention expires the same
/// messages; move steps change the topology; term records change no receipt state and extend
/// the term history.
struct RecordApplier {
    /// The state the records build.
    var engine: ReceiptEngine
    /// Raised to every batch's recorded time, so that a later live batch never goes back.
    var clock: ServiceClock
    /// The log's terms, extended by every term record applied.
    var terms: TermHistory
    /// Events applied so far.
    private(set) var appliedEvents = 0

    /// Applies a decoded batch recorded at `time`.
    mutating func apply(_ events: [Event], at time: Timestamp) {
        for event in events { _ = engine.replay(event, at: time) }
        clock.advance(to: time)
        appliedEvents += events.count
    }

    /// Applies any record, decoding a batch (ids that are not UTF-8 or hold a NUL, from before
    /// intake refused them, are repaired as they were when applied).
    ///
    /// - Parameters:
    ///   - type: The record's type tag.
    ///   - payload: The record's payload.
    ///   - end: Where the record ends in the log.
    /// - Throws: `ServiceError` `.recovery` naming the record, for one that cannot be parsed or
    ///   applied.
    mutating func apply(type: UInt8, payload: UnsafeRawBufferPointer, end: LogPosition) throws(ServiceError) {
        do {
            switch try LogRecord(type: type, payload: payload) {
            case .acknowledgedBatch(let time, let frame), .unacknowledgedBatch(let time, let frame):
                apply(try EventBatchCodec.decode(frame, invalidUTF8: .repair), at: time)
            case .retention(let cutoff):
                _ = engine.expireMessages(sentBefore: cutoff)
            case .termStarted(let term, _, let member):
                let start = RecordFormat.recordStart(end: end.offset, payloadCount: payload.count)
                try terms.append(TermHistory.Entry(term: term, start: start, member: member))
            case let record:
                _ = try ReceiptPipeline.applyMove(record, to: &engine)
            }
        } catch {
            throw ServiceError(.recovery, "log record ending at \(end.offset): \(error)")
        }
    }
}
