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
            counters.increment(.logTruncatedBytes, by: Int(report.truncatedBytes))
            counters.increment(.logDroppedRecords, by: report.droppedRecords)
        }
        var engine = ReceiptEngine(configuration: configuration)
        do {
            if let restored = try log.withLatestSnapshot({ _, payload in
                try ReceiptEngine(restoringFrom: payload, configuration: configuration)
            }) {
                engine = restored
            }
        } catch {
            throw ServiceError(
                .recovery,
                "snapshot at log position \(report.snapshotPosition?.offset ?? 0) cannot be decoded",
                cause: error
            )
        }
        var replayed = 0
        let started = ServiceClock.monotonicMilliseconds()
        do {
            // Records are parsed and batches decoded on a helper thread; the engine applies them
            // here, in log order.
            try log.replay { type, payload, end -> RecoveredRecord in
                let record: LogRecord
                do {
                    record = try LogRecord(type: type, payload: payload)
                } catch {
                    throw ServiceError(.recovery, "log record ending at \(end.offset): \(error)")
                }
                switch record {
                case .acknowledgedBatch(let time, let frame), .unacknowledgedBatch(let time, let frame):
                    // Repairing: a log may hold ids that are not UTF-8 or hold a NUL from before
                    // intake refused them; they replay as they were applied (U+FFFD, cut at the NUL).
                    return .batch(time: time, events: try EventBatchCodec.decode(frame, invalidUTF8: .repair))
                default:
                    return .other(type: type, payload: Array(payload), end: end)
                }
            } applying: { recovered in
                switch recovered {
                case .batch(let time, let events):
                    for event in events { _ = engine.replay(event, at: time) }
                    clock.advance(to: time)
                    replayed += events.count
                case .other(let type, let payload, let end):
                    try payload.withUnsafeBytes { payload in
                        switch try LogRecord(type: type, payload: payload) {
                        case .retention(let cutoff):
                            _ = engine.expireMessages(sentBefore: cutoff)
                        case let record:
                            do {
                                _ = try applyMove(record, to: &engine)
                            } catch {
                                throw ServiceError(.recovery, "move record ending at \(end.offset): \(error)")
                            }
                        }
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
                "recovery.snapshot_position": "\(report.snapshotPosition?.offset ?? 0)",
                "recovery.replayed_events": "\(replayed)",
                "recovery.milliseconds": "\(ServiceClock.monotonicMilliseconds() - started)",
                "recovery.truncated_bytes": "\(report.truncatedBytes)",
                "recovery.dropped_records": "\(report.droppedRecords)",
            ]
        )
        return engine
    }
}
