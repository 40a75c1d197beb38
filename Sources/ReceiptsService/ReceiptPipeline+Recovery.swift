import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire

extension ReceiptPipeline {
    /// Loads the newest snapshot and replays the log after it through the same engine code
    /// as live ingest, at the times recorded in the log.
    static func recover(
        log: ReceiptLog,
        configuration: EngineConfiguration,
        clock: inout ServiceClock,
        counters: ServiceCounters,
        logger: Logger
    ) throws(ServiceError) -> ReceiptEngine {
        let report = log.recovery
        if report.truncatedBytes > 0 {
            counters.increment("receiptd.log.truncated_bytes", by: Int(report.truncatedBytes))
            counters.increment("receiptd.log.dropped_records", by: report.droppedRecords)
        }
        var engine = ReceiptEngine(configuration: configuration)
        if let snapshot = log.latestSnapshot {
            do {
                engine = try ReceiptEngine(restoringFrom: snapshot.payload, configuration: configuration)
            } catch {
                throw ServiceError(
                    .recovery,
                    "snapshot at log position \(snapshot.position.offset) cannot be decoded",
                    cause: error
                )
            }
        }
        var replayed = 0
        let started = ServiceClock.monotonicMilliseconds()
        do {
            try log.replay { type, payload, end in
                let record: LogRecord
                do {
                    record = try LogRecord(type: type, payload: payload)
                } catch {
                    throw ServiceError(.recovery, "log record ending at \(end.offset): \(error)")
                }
                switch record {
                case .acknowledgedBatch(let time, let frame), .unacknowledgedBatch(let time, let frame):
                    let events = try EventBatchCodec.decode(frame)
                    for event in events { _ = engine.replay(event, at: time) }
                    clock.advance(to: time)
                    replayed += events.count
                case .retention(let cutoff):
                    _ = engine.expireMessages(sentBefore: cutoff)
                case .movePrepared, .moveFrozen, .moveImported, .moveReleased, .moveCommitted:
                    do {
                        _ = try applyMove(record, to: &engine)
                    } catch {
                        throw ServiceError(.recovery, "move record ending at \(end.offset): \(error)")
                    }
                }
            }
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError(.recovery, "cannot replay the log", cause: error)
        }
        logger.info(
            "recovered",
            metadata: [
                "recovery.snapshot_position": "\(log.latestSnapshot?.position.offset ?? 0)",
                "recovery.replayed_events": "\(replayed)",
                "recovery.milliseconds": "\(ServiceClock.monotonicMilliseconds() - started)",
                "recovery.truncated_bytes": "\(report.truncatedBytes)",
                "recovery.dropped_records": "\(report.droppedRecords)",
            ]
        )
        return engine
    }
}
