import Foundation
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsReplication
import ReceiptsWire

/// A standby member of an ordinal without its socket (deploy/REPLICATION.md, sections 4.1 to
/// 4.5): its own log, written only with the primary's records at the primary's positions, and
/// its own engine, built from those records by the `RecordApplier` recovery uses, up to the
/// primary's acknowledged position and its own durable one.
///
/// It never appends a record of its own. What needs the log closed it does by closing it,
/// changing the directory and opening it again (recovery then rebuilds the engine from the
/// log): cutting back a tail the primary's history does not have, and installing the primary's
/// snapshot when the primary no longer has the records it lacks. It compacts its own log, with
/// snapshots of its engine at the position applied.
///
/// The loop that owns the replication socket hands it the primary's messages (`receive`) and
/// sends what `receive` and `advance` return. Single-threaded.
final class StandbyReplica {
    let configuration: ServiceConfiguration
    let settings: ReplicationSettings
    let logger: Logger
    let counters: ServiceCounters
    private(set) var log: ReceiptLog
    /// The engine and the terms, as applied.
    private(set) var applier: RecordApplier
    /// Everything before it is applied.
    private(set) var applied: LogPosition
    private var cursor: LogCursor
    /// The terms the `terms` file holds.
    private var recordedTerms: TermHistory
    let follower: Follower
    /// When a refused or failed session may be followed again (monotonic milliseconds).
    private var followNotBefore: Int64 = 0
    /// A fatal log error and a finished compaction, from their threads.
    private let signals: PipelineSignals
    private var compacting = false
    /// Where the standby's lag goes; nil in tests that do not look at it.
    private let metrics: ReplicationMetrics?
    /// When the lag was last sampled (monotonic milliseconds).
    private var sampledAt: Int64 = 0
    /// When a primary was last heard from in an open session (monotonic milliseconds); nil
    /// before the first session opened. Follower reads are refused once it is too old.
    private(set) var lastHeardFromPrimary: Int64?
    /// When the applied position last reached the primary's acknowledged position as heard
    /// (monotonic milliseconds): a follower read's `behind_ms` counts from it.
    private(set) var caughtUpAt: Int64?

    /// Opens the member's log and recovers its engine from it.
    ///
    /// - Throws: `ServiceError` when the log cannot be opened or replayed.
    init(
        configuration: ServiceConfiguration,
        settings: ReplicationSettings,
        logger: Logger,
        counters: ServiceCounters,
        metrics: ReplicationMetrics? = nil,
        wake: @escaping @Sendable () -> Void
    ) throws(ServiceError) {
        self.metrics = metrics
        self.configuration = configuration
        self.settings = settings
        self.logger = logger
        self.counters = counters
        let signals = PipelineSignals(wake: wake)
        self.signals = signals
        (log, applier, cursor) = try Self.open(configuration, logger: logger, counters: counters, signals: signals)
        applied = log.appendedPosition
        recordedTerms = applier.terms
        follower = Follower(
            settings: settings,
            workerIndex: configuration.workerIndex,
            knownTerm: applier.terms.last.term
        )
    }

    private static func open(
        _ configuration: ServiceConfiguration,
        logger: Logger,
        counters: ServiceCounters,
        signals: PipelineSignals
    ) throws(ServiceError) -> (ReceiptLog, RecordApplier, LogCursor) {
        let log = try ReceiptPipeline.openLog(
            configuration: configuration,
            logger: logger,
            onDurable: signals.wake,
            onFatal: { error in signals.reportFatal(error) },
            onGroupCommit: { _ in }
        )
        let applier = try ReceiptPipeline.recover(
            log: log,
            configuration: configuration,
            counters: counters,
            logger: logger
        )
        do {
            return (log, applier, try log.cursor(from: log.appendedPosition))
        } catch {
            throw ServiceError(.storage, "cannot read the log back", cause: error)
        }
    }

    /// The engine, as applied.
    var engine: ReceiptEngine { applier.engine }

    // MARK: - Messages

    /// Takes one message from the primary (its frames as received by the DEALER).
    ///
    /// - Returns: Requests to send to the primary.
    /// - Throws: `ServiceError` when the log cannot be reopened after a cut or a seed, or emptied
    ///   when it cannot be cut back: the member must stop.
    func receive(_ frames: [[UInt8]], now: Int64) throws(ServiceError) -> [ReplicationRequest] {
        let message: ReplicationMessage
        do {
            message = try ReplicationMessage.decode(frames)
        } catch {
            counters.increment(.framesInvalid, label: "\(ErrorReply(error).code)")
            logger.warning("replication message refused", metadata: ["error": "\(error)"])
            return []
        }
        let step: Follower.Step
        do {
            step = try follower.receive(message, log: log, directory: configuration.dataDirectory, now: now)
        } catch {
            logger.warning(
                "replication session ended: the log refused what the primary sent",
                metadata: ["error": "\(error)"]
            )
            followNotBefore = now + settings.heartbeatMilliseconds
            return []
        }
        switch step {
        case .none:
            break
        case .cut(let position):
            metrics?.truncated(bytes: log.appendedPosition.offset - min(position, log.appendedPosition.offset))
            logger.warning(
                "cutting the log back to the primary's history",
                metadata: ["log.end": "\(log.appendedPosition.offset)", "log.cut_to": "\(position)"]
            )
            let directory = configuration.dataDirectory
            if let failure = try reopen({ () throws(LogError) in
                try ReceiptLog.truncate(directory: directory, to: LogPosition(offset: position))
            }) {
                // No snapshot of this log is old enough to cut back to: start over empty, and
                // the primary seeds this member from its own snapshot.
                logger.warning(
                    "the log cannot be cut back that far; starting over from an empty log",
                    metadata: ["error": "\(failure)"]
                )
                if let emptied = try reopen({ () throws(LogError) in try ReceiptLog.empty(directory: directory) }) {
                    throw ServiceError(.storage, "cannot empty the log to follow the primary", cause: emptied)
                }
                restartSession(now: now)
            }
        case .seed(let snapshot, let terms, let engineSettings):
            logger.info(
                "installing the primary's snapshot",
                metadata: ["log.directory": "\(configuration.dataDirectory)"]
            )
            if let failure = try seed(snapshot, terms: terms, engineSettings: engineSettings) {
                logger.warning(
                    "the primary's snapshot was not installed; following again",
                    metadata: ["error": "\(failure)"]
                )
                restartSession(now: now + settings.timeoutMilliseconds)
            }
        case .refused(let error):
            logger.warning("the primary refused to be followed", metadata: ["error": "\(error.message)"])
            followNotBefore = now + settings.timeoutMilliseconds
        }
        return try advance(now: now)
    }

    /// Ends the session, to follow again at `notBefore` (monotonic milliseconds).
    private func restartSession(now notBefore: Int64) {
        follower.end()
        followNotBefore = max(notBefore, 1)
    }

    /// Replaces the log with the primary's snapshot, its terms before it and its engine settings.
    ///
    /// - Returns: Why it was not installed (terms that are not a history, a snapshot that does not
    ///   check out, files that cannot be written): the log is then as it was, or empty.
    /// - Throws: `ServiceError` only when the log cannot be opened again: the member must stop.
    private func seed(
        _ snapshot: IncomingSnapshot,
        terms: [TermStart],
        engineSettings: String
    ) throws(ServiceError) -> (any Error)? {
        let history: TermHistory
        do {
            history = try TermHistory(
                entries: terms.map { TermHistory.Entry(term: $0.term, start: $0.start, member: $0.member) }
            )
        } catch {
            snapshot.discard()
            return error
        }
        let directory = configuration.dataDirectory
        return try reopen { () throws(LogError) in
            try ReceiptLog.seed(directory: directory, from: snapshot) { () throws(LogError) in
                do throws(ServiceError) {
                    try TermsFile.write(history, directory: directory)
                    try ReplaySettings.record(engineSettings, directory: directory)
                } catch {
                    throw LogError(code: .io, message: "cannot write the seeded member's files", cause: error)
                }
            }
        }
    }

    /// Closes the log, changes the directory with `change`, and opens it again, whether the
    /// change succeeded or not (a change that fails leaves a directory that opens: see
    /// `ReceiptLog.truncate` and `ReceiptLog.seed`).
    ///
    /// - Returns: The change's error, if it failed.
    /// - Throws: `ServiceError` when the log cannot be closed or opened again: the member must stop.
    private func reopen(_ change: () throws(LogError) -> Void) throws(ServiceError) -> LogError? {
        awaitCompaction()
        do {
            try log.close()
        } catch {
            throw ServiceError(.storage, "cannot close the log to follow the primary", cause: error)
        }
        var failure: LogError?
        do {
            try change()
        } catch {
            failure = error
        }
        (log, applier, cursor) = try Self.open(configuration, logger: logger, counters: counters, signals: signals)
        applied = log.appendedPosition
        recordedTerms = applier.terms
        return failure
    }

    // MARK: - Driving

    /// Applies what may be applied, records new terms, compacts when due, and says what to
    /// send: a new `Follow` when no session is open (or it went silent), else an ack when due.
    ///
    /// - Throws: `ServiceError` once the log has failed, or a record cannot be applied: the
    ///   member must stop.
    @discardableResult
    func advance(now: Int64) throws(ServiceError) -> [ReplicationRequest] {
        if let error = signals.fatalError {
            throw ServiceError(.storage, "the log failed", cause: error)
        }
        try apply(upTo: min(follower.acknowledged, log.durablePosition.offset))
        if applied.offset >= follower.acknowledged { caughtUpAt = now }
        // While a session is open, its last message is the last word from a primary; a
        // `Follow` that is not answered yet is not one.
        if follower.isFollowing { lastHeardFromPrimary = follower.lastHeard }
        finishCompactionIfDone()
        startCompactionIfDue()
        if let metrics, now - sampledAt >= ServiceMetrics.gaugeIntervalMilliseconds {
            sampledAt = now
            let durable = log.durablePosition.offset
            metrics.recordLag(
                member: settings.member,
                bytes: follower.primaryEnd - min(follower.primaryEnd, durable),
                seconds: 0
            )
        }
        if follower.isFollowing, follower.isSilent(now: now) {
            logger.warning("replication session timed out; following again")
            follower.end()
        }
        if !follower.isFollowing, follower.isSilent(now: now) || followNotBefore > 0, now >= followNotBefore {
            followNotBefore = 0
            return [
                follower.follow(
                    log: log,
                    terms: try termsOfLog(),
                    engineSettings: ReplaySettings.recordedText(directory: configuration.dataDirectory),
                    now: now
                )
            ]
        }
        return follower.acknowledgement(log: log, applied: applied.offset, now: now).map { [$0] } ?? []
    }

    /// The first `Follow`, when the member starts.
    func start(now: Int64) throws(ServiceError) -> ReplicationRequest {
        follower.follow(
            log: log,
            terms: try termsOfLog(),
            engineSettings: ReplaySettings.recordedText(directory: configuration.dataDirectory),
            now: now
        )
    }

    /// The log's whole term history: the terms applied, and the term records appended beyond what
    /// was applied (a `Follow` must describe the log it holds, or the primary would answer with a
    /// divergence point before records this member already confirmed, and cut them).
    ///
    /// Makes everything appended durable first, so that a cursor reads it; a `Follow` is rare.
    private func termsOfLog() throws(ServiceError) -> TermHistory {
        var terms = applier.terms
        guard applied < log.appendedPosition else { return terms }
        do {
            try log.flush()
            let reader = try log.cursor(from: applied)
            while try reader.read({ record in
                guard record.type == LogRecord.Kind.termStarted.rawValue,
                    case .termStarted(let term, _, let member) = try LogRecord(
                        type: record.type,
                        payload: record.payload
                    )
                else { return }
                try terms.append(TermHistory.Entry(term: term, start: record.start.offset, member: member))
            }) > 0 {}
        } catch {
            throw ServiceError(.storage, "cannot read the log's terms back", cause: error)
        }
        return terms
    }

    /// Applies the records from `applied` up to `limit` (record ends at or before it).
    private func apply(upTo limit: UInt64) throws(ServiceError) {
        guard applied.offset < limit else { return }
        struct Reached: Error {}
        do {
            while applied.offset < limit {
                let read = try cursor.read { record in
                    guard record.end.offset <= limit else { throw Reached() }
                    try applier.apply(type: record.type, payload: record.payload, end: record.end)
                    applied = record.end
                }
                if read == 0 { break }
            }
        } catch is Reached {
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError(.storage, "cannot read the log back", cause: error)
        }
        if applier.terms != recordedTerms {
            try TermsFile.write(applier.terms, directory: configuration.dataDirectory)
            recordedTerms = applier.terms
        }
    }

    // MARK: - Compaction

    /// Snapshots the engine at the position applied, on another thread, once enough was logged
    /// since the last snapshot. A standby writes no retention record: retention is the
    /// primary's record, replicated like any other.
    private func startCompactionIfDue() {
        guard !compacting, log.bytesSinceSnapshot >= configuration.compactAfterBytes,
            applied.offset > (log.newestSnapshotPosition?.offset ?? 0)
        else { return }
        compacting = true
        signals.writeSnapshotInBackground(applier.engine, covering: applied, in: log, messagesExpired: 0)
    }

    private func finishCompactionIfDone() {
        guard let outcome = signals.takeCompaction() else { return }
        compacting = false
        switch outcome.result {
        case .success:
            counters.increment(.compactions)
        case .failure(let error):
            counters.increment(.compactionsFailed)
            logger.error("compaction failed", metadata: ["error": "\(error)"])
        }
    }

    /// Waits for a running compaction (before the log closes).
    private func awaitCompaction() {
        while compacting {
            usleep(1000)
            finishCompactionIfDone()
        }
    }

    /// Waits for a running compaction and closes the log.
    func close() {
        awaitCompaction()
        do {
            try log.close()
        } catch {
            logger.error("closing the log failed", metadata: ["error": "\(error)"])
        }
    }
}
