import Foundation
import ReceiptLog
import ReceiptsCore
import ReceiptsWire

extension ReceiptPipeline {
    /// Starts a compaction when enough was logged since the last snapshot, or enough time passed
    /// (not before the pause that follows a failure).
    func startCompactionIfDue(now: Int64) {
        guard !compaction.isRunning, now >= compaction.notBeforeMonotonic else { return }
        let sinceSnapshot = log.bytesSinceSnapshot
        if sinceSnapshot >= configuration.compactAfterBytes {
            startCompaction(reason: "size", now: now)
        } else if configuration.compactIntervalSeconds > 0, sinceSnapshot > 0,
            now - compaction.lastStartedMonotonic >= Int64(configuration.compactIntervalSeconds) * 1000
        {
            startCompaction(reason: "interval", now: now)
        }
    }

    /// Snapshots the engine (an O(1) copy of a value type) at the log's current end and
    /// encodes and writes it on another thread, so intake never waits for it.
    ///
    /// Retention is logged before it is applied, so a replay after a crash expires the same
    /// messages at the same point of the history.
    func startCompaction(reason: String, now: Int64) {
        guard !compaction.isRunning else { return }
        var expiredCount = 0
        if configuration.retentionSeconds > 0 {
            let cutoff = Timestamp(milliseconds: clock.now().milliseconds - configuration.retentionSeconds * 1000)
            guard case .success = append(.retention(cutoff: cutoff)) else {
                return
            }
            expiredCount = engine.expireMessages(sentBefore: cutoff)
        }
        compaction.isRunning = true
        compaction.lastStartedMonotonic = now
        let position = log.appendedPosition
        logger.debug(
            "compaction started",
            metadata: ["compaction.reason": "\(reason)", "compaction.position": "\(position.offset)"]
        )
        signals.writeSnapshotInBackground(engine, covering: position, in: log, messagesExpired: expiredCount)
    }

    /// Takes a finished compaction's outcome: counts it, schedules the pause after a failure,
    /// and answers the clients that asked for it.
    func finishCompactionIfDone(now: Int64) {
        guard let outcome = signals.takeCompaction() else { return }
        compaction.isRunning = false
        let result: QueryReply
        switch outcome.result {
        case .success(let report):
            compaction.succeeded()
            counters.increment(.compactions)
            metrics.snapshotDuration.record(duration: outcome.duration)
            metrics.snapshotBytes.record(report.snapshotBytes)
            counters.increment(.messagesExpired, by: outcome.messagesExpired)
            logger.info(
                "compacted",
                metadata: [
                    "compaction.snapshot_bytes": "\(report.snapshotBytes)",
                    "compaction.segments_removed": "\(report.segmentsRemoved)",
                    "compaction.messages_expired": "\(outcome.messagesExpired)",
                ]
            )
            result = .compact(
                CompactResult(
                    snapshotBytes: report.snapshotBytes,
                    segmentsRemoved: report.segmentsRemoved,
                    messagesExpired: UInt64(outcome.messagesExpired)
                )
            )
        case .failure(let error):
            compaction.failed(now: now)
            counters.increment(.compactionsFailed)
            logger.error("compaction failed", metadata: ["error": "\(error)"])
            result = .error(ErrorReply(code: .internal, message: "compaction failed: \(error)"))
        }
        for envelope in compaction.requesters {
            reply(envelope.reply(result.encode()), on: .queries)
        }
        compaction.requesters.removeAll()
    }
}
