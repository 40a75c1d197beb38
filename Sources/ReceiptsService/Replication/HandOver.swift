import Logging
import ReceiptsReplication
import ReceiptsWire

/// A switchover on an elected primary (deploy/REPLICATION.md, section 12.2): new ingest is
/// refused (`UNAVAILABLE`, nothing applied) while the primary waits until everything it
/// appended is acknowledged, then it writes the `handover` key and deletes its primary key in
/// one guarded transaction (`Coordinator.handOver`), and its loop ends so that the member
/// becomes a standby of the standby it named, which campaigns at once.
///
/// **Why "acknowledged" is the whole log on the target.** A hand-over needs
/// `--replication-ack standby`. Then the frontier is the position durable here and on every
/// standby acknowledgements wait for, and every member of the in-sync set recorded in the
/// coordination service is one of those (gating before recording, recording before ungating:
/// `InSyncSet`). So once the frontier covers the appended position, every recorded in-sync
/// standby, the target included, has confirmed the whole log durable: it loses nothing when
/// it takes over, and the replies of everything accepted have gone out. Under `local` no
/// standby's position is known here, and a hand-over is refused.
///
/// Started by a `demote` query (answered once the transaction committed, or refused) or by a
/// stop (SIGTERM: handing over comes before draining; without an in-sync standby the stop
/// drains and resigns as before). If the standbys do not confirm within
/// `HandOverRecord.confirmationLimitMilliseconds`, ingest is taken again and the demote is refused.
///
/// Owned by the `ServiceLoop`'s thread; the coordinator's calls block it for a round trip to
/// the coordination service, while ingest is paused anyway.
final class HandOver {
    /// How a hand-over ended, with the demote queries waiting for it.
    enum Outcome {
        /// The ordinal is handed over: this member's loop must end.
        case handedOver(HandOverResult, requesters: [RequestEnvelope])
        /// It did not happen; ingest is taken again (unless this member is no longer primary).
        case failed(ErrorReply, requesters: [RequestEnvelope])
    }

    /// A hand-over waiting for the confirmations.
    private struct Running {
        /// The member asked for; "" for any in-sync standby.
        var target: String
        /// When it gives up (monotonic milliseconds).
        var deadline: Int64
        /// The demote queries to answer when it ends.
        var requesters: [RequestEnvelope]
    }

    private let primaryTerm: PrimaryTerm
    private let member: String
    private let acknowledgement: ReplicationSettings.Acknowledgement
    private let gate: ReplicationGate
    private let logger: Logger
    private var running: Running?
    /// Whether a stop already tried to hand over (it tries once).
    private var triedForStop = false
    /// The hand-over that took place, once it did.
    private(set) var result: HandOverResult?

    /// A hand-over for the primary of `primaryTerm`.
    ///
    /// - Parameters:
    ///   - member: This member's name.
    ///   - acknowledgement: `--replication-ack`; only `standby` can hand over.
    ///   - gate: The gate whose ingest refusal pauses ingest.
    init(
        primaryTerm: PrimaryTerm,
        member: String,
        acknowledgement: ReplicationSettings.Acknowledgement,
        gate: ReplicationGate,
        logger: Logger
    ) {
        self.primaryTerm = primaryTerm
        self.member = member
        self.acknowledgement = acknowledgement
        self.gate = gate
        self.logger = logger
    }

    /// Starts a hand-over to `target` ("" for any in-sync standby), or joins the one running.
    ///
    /// - Parameters:
    ///   - requester: The demote query to answer when it ends; nil for a stop.
    ///   - now: Monotonic milliseconds.
    /// - Returns: Why it cannot start (then nothing changed); nil when it runs.
    func begin(to target: String, requester: RequestEnvelope?, now: Int64) -> ErrorReply? {
        if result != nil {
            return ErrorReply(code: .unavailable, message: "demote: the ordinal is being handed over already")
        }
        if var running {
            guard target.isEmpty || target == running.target else {
                return ErrorReply(
                    code: .invalidArgument,
                    message:
                        "demote: a hand-over to \(running.target.isEmpty ? "any in-sync standby" : running.target) is under way"
                )
            }
            if let requester { running.requesters.append(requester) }
            self.running = running
            return nil
        }
        guard acknowledgement == .standby else {
            return ErrorReply(
                code: .invalidArgument,
                message:
                    "demote: a hand-over needs --replication-ack standby (under local no standby's position is known)"
            )
        }
        if let refusal = candidates(for: target).refusal { return refusal }
        running = Running(
            target: target,
            deadline: now + HandOverRecord.confirmationLimitMilliseconds,
            requesters: requester.map { [$0] } ?? []
        )
        gate.pauseIngest(true)
        logger.notice(
            "handing the ordinal over: ingest paused until the in-sync standbys confirm the whole log",
            metadata: ["replication.handover.to": "\(target.isEmpty ? "any" : target)"]
        )
        return nil
    }

    /// For a stop: starts a hand-over to any in-sync standby the first time, and says whether
    /// the loop must keep running for it (false: stop now, draining and resigning as before).
    func holdsStop(now: Int64) -> Bool {
        if running != nil { return true }
        guard result == nil, !triedForStop else { return false }
        triedForStop = true
        if let refusal = begin(to: "", requester: nil, now: now) {
            logger.info(
                "stopping without a hand-over",
                metadata: ["replication.handover.refused": "\(refusal.message)"]
            )
            return false
        }
        return true
    }

    /// Commits the running hand-over once everything appended is acknowledged, or gives it up
    /// at its deadline.
    ///
    /// - Parameters:
    ///   - appended: The log's appended position.
    ///   - acknowledged: The pipeline's frontier (durable here and on every gating standby).
    ///   - now: Monotonic milliseconds.
    /// - Returns: How it ended; nil while it waits, or when none runs.
    func advance(appended: UInt64, acknowledged: UInt64, now: Int64) -> Outcome? {
        guard let running else { return nil }
        if acknowledged >= appended {
            return commit(running)
        }
        guard now >= running.deadline else { return nil }
        return fail(
            running,
            ErrorReply(
                code: .unavailable,
                message:
                    "demote: no in-sync standby confirmed the whole log within \(HandOverRecord.confirmationLimitMilliseconds) ms; ingest is taken again"
            ),
            resumingIngest: true
        )
    }

    /// The transaction: the target named (or the first in-sync standby), still in the set.
    private func commit(_ running: Running) -> Outcome {
        let candidates = candidates(for: running.target)
        if let refusal = candidates.refusal {
            // Still primary (a lost primary key says so): the set changed meanwhile.
            return fail(running, refusal, resumingIngest: refusal.code != .notPrimary)
        }
        let record = HandOverRecord(
            term: primaryTerm.term,
            to: running.target.isEmpty ? candidates.members[0] : running.target
        )
        let coordinator = primaryTerm.coordinator
        let guardRevision = primaryTerm.guardRevision
        let written: Bool
        do {
            written = try Blocking.run { () async throws(CoordinationError) in
                try await coordinator.handOver(record, guardRevision: guardRevision)
            }
        } catch {
            // The outcome is unknown: if it committed the watcher sees the keys and the loop
            // ends; if not, this member is still primary and takes ingest again.
            return fail(
                running,
                ErrorReply(code: .unavailable, message: "demote: the coordination service did not answer: \(error)"),
                resumingIngest: true
            )
        }
        guard written else {
            return fail(
                running,
                ErrorReply(code: .notPrimary, message: "demote: this member is no longer primary"),
                resumingIngest: false
            )
        }
        let result = HandOverResult(from: member, to: record.to, term: record.term)
        self.result = result
        self.running = nil
        logger.notice(
            "handed the ordinal over",
            metadata: ["replication.handover.to": "\(record.to)", "replication.term": "\(record.term)"]
        )
        return .handedOver(result, requesters: running.requesters)
    }

    private func fail(_ running: Running, _ error: ErrorReply, resumingIngest: Bool) -> Outcome {
        self.running = nil
        if resumingIngest { gate.pauseIngest(false) }
        logger.warning("no hand-over", metadata: ["error": "\(error.message)"])
        return .failed(error, requesters: running.requesters)
    }

    /// The in-sync standbys recorded for this term that `target` ("" for any) may be, or why
    /// there is none.
    private func candidates(for target: String) -> (members: [String], refusal: ErrorReply?) {
        let coordinator = primaryTerm.coordinator
        let state: OrdinalState
        do {
            state = try Blocking.run { () async throws(CoordinationError) in try await coordinator.state() }
        } catch {
            return (
                [], ErrorReply(code: .unavailable, message: "demote: the coordination service did not answer: \(error)")
            )
        }
        guard state.primary?.member == member, state.primaryRevision == primaryTerm.guardRevision else {
            return ([], ErrorReply(code: .notPrimary, message: "demote: this member is no longer primary"))
        }
        let inSync = state.inSync.flatMap { $0.term == primaryTerm.term ? $0.standbys : nil } ?? []
        if inSync.isEmpty {
            return ([], ErrorReply(code: .unavailable, message: "demote: no standby is in sync"))
        }
        if !target.isEmpty, !inSync.contains(target) {
            return (
                [],
                ErrorReply(
                    code: .invalidArgument,
                    message: "demote: \(target) is not in the in-sync set (\(inSync.joined(separator: ", ")))"
                )
            )
        }
        return (inSync, nil)
    }
}
