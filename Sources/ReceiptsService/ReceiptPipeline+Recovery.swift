import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire

extension ReceiptPipeline {
    /// Loads the newest snapshot and replays the log after it through the same engine code
    /// as live ingest, at the times recorded in the log, and rebuilds the term history.
    ///
    /// Term records change no receipt state. Replay collects them after the `terms` file's
    /// entries that start before the snapshot (`TermsFile` says why both), and the file is
    /// rewritten if that differs from what it held, before the pipeline serves or compacts.
    ///
    /// - Parameters:
    ///   - directory: The data directory, which holds the `terms` file.
    ///   - terms: Set to the log's term history.
    static func recover(
        log: ReceiptLog,
        directory: String,
        configuration: EngineConfiguration,
        clock: inout ServiceClock,
        terms: inout TermHistory,
        counters: ServiceCounters,
        logger: Logger
    ) throws(ServiceError) -> ReceiptEngine {
        let report = log.recovery
        let recordedTerms = try TermsFile.read(directory: directory)
        let replayStart = report.snapshotPosition?.offset ?? 0
        var history = (recordedTerms ?? TermHistory()).prefix(before: replayStart)
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
                        case .termStarted(let term, _, let member):
                            let start = RecordFormat.recordStart(end: end.offset, payloadCount: payload.count)
                            do {
                                try history.append(TermHistory.Entry(term: term, start: start, member: member))
                            } catch {
                                throw ServiceError(.recovery, "term record ending at \(end.offset): \(error)")
                            }
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
        if history != recordedTerms {
            if recordedTerms == nil, replayStart > 0 {
                logger.warning(
                    "no terms file: the terms before the snapshot, if any, are unknown and taken as term 0",
                    metadata: ["recovery.snapshot_position": "\(replayStart)"]
                )
            }
            try TermsFile.write(history, directory: directory)
        }
        terms = history
        logger.info(
            "recovered",
            metadata: [
                "recovery.snapshot_position": "\(report.snapshotPosition?.offset ?? 0)",
                "recovery.replayed_events": "\(replayed)",
                "recovery.milliseconds": "\(ServiceClock.monotonicMilliseconds() - started)",
                "recovery.truncated_bytes": "\(report.truncatedBytes)",
                "recovery.dropped_records": "\(report.droppedRecords)",
                "recovery.term": "\(history.last.term)",
            ]
        )
        return engine
    }
}
