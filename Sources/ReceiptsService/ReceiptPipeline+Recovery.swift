import Glibc
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsReplication
import ReceiptsWire

extension ReceiptPipeline {
    /// Opens the worker's log in its data directory, under the configured fsync policy.
    ///
    /// - Parameters: as `ReceiptLog.init`'s callbacks.
    /// - Throws: `ServiceError` `.storage` when the log cannot be opened.
    static func openLog(
        configuration: ServiceConfiguration,
        logger: Logger,
        onDurable: @escaping @Sendable () -> Void,
        onFatal: @escaping @Sendable (LogError) -> Void,
        onGroupCommit: @escaping @Sendable (GroupCommit) -> Void
    ) throws(ServiceError) -> ReceiptLog {
        var logConfiguration = LogConfiguration(directory: configuration.dataDirectory)
        logConfiguration.fsyncPolicy = configuration.fsyncPolicy
        logConfiguration.cutCorruptionAtStart = configuration.cutCorruptionAtStart
        do {
            return try ReceiptLog(
                configuration: logConfiguration,
                logger: logger,
                onDurable: onDurable,
                onFatal: onFatal,
                onGroupCommit: onGroupCommit
            )
        } catch {
            throw ServiceError(.storage, "cannot open the log in \(configuration.dataDirectory)", cause: error)
        }
    }

    /// Recovers the worker's state from its opened log: the engine settings reconciled with the
    /// directory's `engine-settings` file, then `recover(log:directory:configuration:...)`.
    ///
    /// - Returns: The recovered engine, clock and terms, ready to apply what follows in the log.
    /// - Throws: `ServiceError` when the settings disagree or the log cannot be replayed.
    static func recover(
        log: ReceiptLog,
        configuration: ServiceConfiguration,
        counters: ServiceCounters,
        logger: Logger
    ) throws(ServiceError) -> RecordApplier {
        if log.recovery.discardedInterruptedSeed {
            // The log opened empty: the files a seed writes beside it describe a log that is gone.
            for name in [TermsFile.fileName, ReplaySettings.fileName] {
                unlink("\(configuration.dataDirectory)/\(name)")
            }
            logger.warning("an interrupted seed was discarded; this member starts from an empty log")
        }
        var engineConfiguration = EngineConfiguration(
            workerIndex: configuration.workerIndex,
            workerCount: configuration.workerCount,
            pendingReceiptLimit: configuration.pendingReceiptLimit,
            pendingReceiptLifetime: configuration.pendingReceiptLifetimeMilliseconds
        )
        engineConfiguration.workerCount = try ReplaySettings(engineConfiguration).reconcile(
            directory: configuration.dataDirectory,
            acceptChange: configuration.acceptSettingsChange
        )
        return try replay(
            log: log,
            directory: configuration.dataDirectory,
            configuration: engineConfiguration,
            threads: configuration.threadStarter,
            wall: configuration.wallClock,
            counters: counters,
            logger: logger
        )
    }

    /// Loads the newest snapshot and replays the log after it through the same engine code
    /// as live ingest, at the times recorded in the log, and rebuilds the term history.
    ///
    /// Term records change no receipt state. Replay collects them after the `terms` file's
    /// entries that start before the snapshot (`TermsFile` says why both), and the file is
    /// rewritten if that differs from what it held, before the pipeline serves or compacts.
    ///
    /// - Parameters:
    ///   - directory: The data directory, which holds the `terms` file.
    ///   - threads: Starts the `log-replay` helper thread; replay fails if it cannot.
    ///   - wall: Where the recovered clock reads wall time.
    /// - Returns: The engine, clock and terms the log holds.
    private static func replay(
        log: ReceiptLog,
        directory: String,
        configuration: EngineConfiguration,
        threads: ThreadStarter,
        wall: WallClock,
        counters: ServiceCounters,
        logger: Logger
    ) throws(ServiceError) -> RecordApplier {
        let report = log.recovery
        let recordedTerms = try TermsFile.read(directory: directory)
        let replayStart = report.snapshotPosition?.offset ?? 0
        let recordedBefore = (recordedTerms ?? TermHistory()).prefix(before: replayStart)
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
        var applier = RecordApplier(engine: engine, clock: ServiceClock(wall: wall), terms: recordedBefore)
        let started = ServiceClock.monotonicMilliseconds()
        do {
            // Records are parsed and batches decoded on a helper thread; the engine applies them
            // here, in log order.
            try log.replay(threads: threads) { type, payload, end -> RecoveredRecord in
                let record: LogRecord
                do {
                    record = try LogRecord(type: type, payload: payload)
                } catch {
                    throw ServiceError(.recovery, "log record ending at \(end.offset): \(error)")
                }
                switch record {
                case .acknowledgedBatch(let time, let frame), .unacknowledgedBatch(let time, let frame):
                    // Repairing, as `RecordApplier` does.
                    return .batch(time: time, events: try EventBatchCodec.decode(frame, invalidUTF8: .repair))
                default:
                    return .other(type: type, payload: Array(payload), end: end)
                }
            } applying: { recovered in
                switch recovered {
                case .batch(let time, let events):
                    applier.apply(events, at: time)
                case .other(let type, let payload, let end):
                    try payload.withUnsafeBytes { payload in
                        try applier.apply(type: type, payload: payload, end: end)
                    }
                }
            }
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError(.recovery, "cannot replay the log", cause: error)
        }
        let replayed = applier.appliedEvents
        let history = applier.terms
        if history != recordedTerms {
            if recordedTerms == nil, replayStart > 0 {
                logger.warning(
                    "no terms file: the terms before the snapshot, if any, are unknown and taken as term 0",
                    metadata: ["recovery.snapshot_position": "\(replayStart)"]
                )
            }
            try TermsFile.write(history, directory: directory)
        }
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
        return applier
    }
}
