import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire

/// The operator's side of a worker count change (deploy/SCALING.md): each step is applied to
/// a copy of the engine first (so a refused step changes nothing and logs nothing), then
/// appended to the log, and answered only once the log made it durable.
extension ReceiptPipeline {
    /// Applies a move record to an engine, live and in replay.
    /// - Returns: For an import, how many conversations became this worker's and how many it
    ///   held already; zeros for the other steps.
    /// - Throws: `MoveError` when the step does not fit the engine's topology.
    static func applyMove(
        _ record: LogRecord,
        to engine: inout ReceiptEngine
    ) throws(MoveError) -> (imported: Int, alreadyHeld: Int) {
        switch record {
        case .movePrepared(let epoch, let from, let to):
            try engine.prepareMove(epoch: epoch, from: from, to: to)
        case .moveFrozen(let epoch, let destination, let conversations):
            try engine.freeze(conversations, epoch: epoch, to: destination)
        case .moveImported(let time, let epoch, let sender, let last, let state):
            let export = state.isEmpty ? ExportedConversations.none : try ExportedConversations([UInt8](state))
            return try engine.importConversations(export, epoch: epoch, from: sender, last: last, at: time)
        case .moveReleased(let epoch, let destination, let conversations):
            try engine.release(conversations, epoch: epoch, to: destination)
        case .moveCommitted(let epoch):
            try engine.commitMove(epoch: epoch)
        case .acknowledgedBatch, .unacknowledgedBatch, .retention, .termStarted:
            break
        }
        return (0, 0)
    }

    /// Answers a move query (operators only; checked by the caller); `.topology`, the one
    /// that changes nothing, is the default branch.
    func answerMove(_ query: Query) -> QueryReply {
        switch query {
        case .prepareMove(let epoch, let from, let to):
            return step(.movePrepared(epoch: epoch, from: from, to: to)).map { _ in .topology(topologyReport) }
        case .exportConversations(let epoch, let destination, let limit):
            return export(epoch: epoch, destination: destination, limit: limit)
        case .importConversations(let epoch, let sender, let state, let last):
            let now = clock.now()
            return state.withUnsafeBytes { state in
                step(.moveImported(time: now, epoch: epoch, sender: sender, last: last, state: state)).map {
                    .importResult(imported: $0.imported, alreadyHeld: $0.alreadyHeld)
                }
            }
        case .releaseConversations(let epoch, let destination, let conversations):
            let record = LogRecord.moveReleased(epoch: epoch, destination: destination, conversations: conversations)
            return step(record).map { _ in .topology(topologyReport) }
        case .commitMove(let epoch):
            return step(.moveCommitted(epoch: epoch)).map { _ in .topology(topologyReport) }
        default:  // .topology
            return .topology(topologyReport)
        }
    }

    /// Where this worker stands.
    var topologyReport: TopologyReport {
        let topology = engine.topology
        let progress = engine.moveProgress
        return TopologyReport(
            moveEpoch: topology.moveEpoch,
            workerIndex: configuration.workerIndex,
            workerCount: topology.workerCount,
            targetCount: topology.targetCount,
            completedSenders: topology.completedSenders.sorted(),
            owned: progress.owned,
            frozen: progress.frozen,
            released: progress.released,
            imported: progress.imported
        )
    }

    /// Freezes the next conversations for `destination` and answers their state; the reply
    /// waits until the freeze, and so everything applied to them before it, is durable.
    private func export(epoch: UInt64, destination: Int, limit: Int) -> QueryReply {
        var (ids, remaining): ([String], Int)
        do {
            (ids, remaining) = try engine.conversationsToExport(
                epoch: epoch,
                destination: destination,
                limit: min(max(limit, 1), 10_000)
            )
        } catch {
            return refused(error)
        }
        // The import must fit in one query frame on the receiver: halve until it does.
        var state = engine.exportedState(of: ids)
        while state.count > configuration.maxFrameBytes / 2, ids.count > 1 {
            remaining += ids.count - ids.count / 2
            ids.removeLast(ids.count - ids.count / 2)
            state = engine.exportedState(of: ids)
        }
        guard !ids.isEmpty else {
            return .exportResult(ExportResult(conversations: [], state: state, remaining: remaining))
        }
        return step(.moveFrozen(epoch: epoch, destination: destination, conversations: ids)).map { _ in
            .exportResult(ExportResult(conversations: ids, state: state, remaining: remaining))
        }
    }

    /// Applies a step to a copy of the engine, logs it, and keeps the copy.
    private func step(_ record: LogRecord) -> StepResult {
        // A step's answer must survive a failover (deploy/REPLICATION.md, section 11): under
        // `--replication-ack local` nothing waits for the standbys, so a new primary could lack a
        // step the driver was told about. Refused before anything is applied.
        if configuration.replication?.acknowledgement == .local {
            return StepResult(
                failure: .error(
                    ErrorReply(
                        code: .invalidArgument,
                        message: "move steps need --replication-ack standby on a replicated ordinal (deploy/SCALING.md)"
                    )
                )
            )
        }
        var trial = engine
        let outcome: (imported: Int, alreadyHeld: Int)
        do {
            outcome = try Self.applyMove(record, to: &trial)
        } catch {
            return StepResult(failure: refused(error))
        }
        if case .failure(let error) = append(record) {
            return StepResult(
                failure: .error(ErrorReply(code: .unavailable, message: "the log refused the step: \(error)"))
            )
        }
        // A step is answered once durable; under the interval and none policies "durable" only
        // means written, and a lost freeze or import would leave a conversation with two owners
        // or none: every step is synced, whatever the policy (steps are few).
        if configuration.fsyncPolicy != .always {
            do {
                try log.flush()
            } catch {
                signals.reportFatal(error)
                return StepResult(failure: .error(ErrorReply(code: .unavailable, message: "the log failed: \(error)")))
            }
        }
        engine = trial
        counters.increment(.moveSteps, label: record.kind.name)
        logger.info(
            "move step",
            metadata: [
                "move.step": "\(record.kind.name)", "move.epoch": "\(engine.topology.moveEpoch)",
                "move.target": "\(engine.topology.targetCount.map(String.init) ?? "-")",
                "move.imported": "\(outcome.imported)",
            ]
        )
        return StepResult(outcome: outcome)
    }

    private func refused(_ error: MoveError) -> QueryReply {
        counters.increment(.moveRefusals, label: "\(error.code)")
        logger.warning("move step refused", metadata: ["error": "\(error)"])
        return .error(ErrorReply(code: .invalidArgument, message: "\(error)"))
    }
}

/// A move step's outcome, or the error reply that refused it.
struct StepResult {
    var outcome: (imported: Int, alreadyHeld: Int) = (0, 0)
    var failure: QueryReply?

    init(outcome: (imported: Int, alreadyHeld: Int)) {
        self.outcome = outcome
    }

    init(failure: QueryReply) {
        self.failure = failure
    }

    /// The reply for a step that went through, else the refusal.
    func map(_ reply: ((imported: Int, alreadyHeld: Int)) -> QueryReply) -> QueryReply {
        failure ?? reply(outcome)
    }
}
