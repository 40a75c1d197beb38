import Logging
import ReceiptsReplication
import ReceiptsWire
import Synchronization

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
/// Owned by the `ServiceLoop`'s thread, which it never blocks: the coordinator's calls (reading
/// the keys before and again at the commit, and the transaction) run in tasks whose answers come
/// back through a mailbox and the loop's doorbell, so queries (health, statuses) and refusals
/// keep being answered while the coordination service is slow or unreachable.
final class HandOver {
    /// How a hand-over ended, with the demote queries waiting for it.
    enum Outcome {
        /// The ordinal is handed over: this member's loop must end.
        case handedOver(HandOverResult, requesters: [RequestEnvelope])
        /// It did not happen; ingest is taken again (unless this member is no longer primary).
        case failed(ErrorReply, requesters: [RequestEnvelope])
    }

    /// Where a running hand-over stands.
    private enum Phase {
        /// Reading the keys: is `target` (or any standby) in the recorded in-sync set?
        case checking
        /// The keys allow it: waiting until everything appended is acknowledged.
        case waiting
        /// Reading the keys again and writing the transaction.
        case committing
    }

    /// A running hand-over.
    private struct Running {
        /// The member asked for; "" for any in-sync standby.
        var target: String
        /// When it gives up waiting for the confirmations (monotonic milliseconds); a commit
        /// under way is not given up: its outcome decides.
        var deadline: Int64
        /// The demote queries to answer when it ends.
        var requesters: [RequestEnvelope]
        var phase: Phase
    }

    /// Where a call's task leaves its answer for the loop's thread.
    private final class Mailbox: Sendable {
        let answer = Mutex<Answer?>(nil)

        /// The answer left, if any, taken out.
        func take() -> Answer? {
            answer.withLock { answer in
                defer { answer = nil }
                return answer
            }
        }
    }

    /// What a coordinator call answered, handed from its task to the loop's thread.
    private enum Answer: Sendable {
        /// The keys' verdict: nil when the hand-over may go on, else why not.
        case checked(ErrorReply?)
        /// The transaction wrote `record`.
        case committed(HandOverRecord)
        /// The commit did not happen (`resumesIngest`: this member is still primary).
        case notCommitted(ErrorReply, resumesIngest: Bool)
    }

    private let primaryTerm: PrimaryTerm
    private let member: String
    private let acknowledgement: ReplicationSettings.Acknowledgement
    private let gate: ReplicationGate
    private let logger: Logger
    /// Rings the loop's doorbell when an answer arrives.
    private let wake: @Sendable () -> Void
    private let mailbox = Mailbox()
    private var running: Running?
    /// Whether a stop already tried to hand over (it tries once).
    private var triedForStop = false
    /// The hand-over that took place, once it did.
    private(set) var result: HandOverResult?

    /// Whether the transaction is under way: its answer is coming (within the coordinator's call
    /// timeout), and the loop must wait for it before it ends, or the demote would go unanswered
    /// when the watcher sees the keys change first.
    var isCommitting: Bool {
        if case .committing = running?.phase { return true }
        return false
    }

    /// A hand-over for the primary of `primaryTerm`.
    ///
    /// - Parameters:
    ///   - member: This member's name.
    ///   - acknowledgement: `--replication-ack`; only `standby` can hand over.
    ///   - gate: The gate whose ingest refusal pauses ingest.
    ///   - wake: Wakes the loop that calls `advance` (its doorbell).
    init(
        primaryTerm: PrimaryTerm,
        member: String,
        acknowledgement: ReplicationSettings.Acknowledgement,
        gate: ReplicationGate,
        logger: Logger,
        wake: @escaping @Sendable () -> Void
    ) {
        self.primaryTerm = primaryTerm
        self.member = member
        self.acknowledgement = acknowledgement
        self.gate = gate
        self.logger = logger
        self.wake = wake
    }

    /// Starts a hand-over to `target` ("" for any in-sync standby), or joins the one running.
    /// New ingest is refused from now on; the keys are read in a task and `advance` carries on.
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
        running = Running(
            target: target,
            deadline: now + HandOverRecord.confirmationLimitMilliseconds,
            requesters: requester.map { [$0] } ?? [],
            phase: .checking
        )
        gate.pauseIngest(true)
        logger.notice(
            "handing the ordinal over: ingest paused until the in-sync standbys confirm the whole log",
            metadata: ["replication.handover.to": "\(target.isEmpty ? "any" : target)"]
        )
        call { [primaryTerm, member] in
            .checked(await Self.candidates(for: target, primaryTerm: primaryTerm, member: member).refusal)
        }
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

    /// Takes the running hand-over one step: takes what the coordinator answered, commits once
    /// everything appended is acknowledged, or gives up at the deadline.
    ///
    /// - Parameters:
    ///   - appended: The log's appended position.
    ///   - acknowledged: The pipeline's frontier (durable here and on every gating standby).
    ///   - now: Monotonic milliseconds.
    /// - Returns: How it ended; nil while it runs, or when none runs.
    func advance(appended: UInt64, acknowledged: UInt64, now: Int64) -> Outcome? {
        guard var running else { return nil }
        if let answer = mailbox.take() {
            switch answer {
            case .checked(let refusal?):
                // Still primary unless the keys said otherwise.
                return fail(running, refusal, resumingIngest: refusal.code != .notPrimary)
            case .checked(nil):
                running.phase = .waiting
                self.running = running
            case .committed(let record):
                let result = HandOverResult(from: member, to: record.to, term: record.term)
                self.result = result
                self.running = nil
                logger.notice(
                    "handed the ordinal over",
                    metadata: ["replication.handover.to": "\(record.to)", "replication.term": "\(record.term)"]
                )
                return .handedOver(result, requesters: running.requesters)
            case .notCommitted(let refusal, let resumesIngest):
                return fail(running, refusal, resumingIngest: resumesIngest)
            }
        }
        switch running.phase {
        case .committing:
            return nil
        case .waiting where acknowledged >= appended:
            running.phase = .committing
            self.running = running
            call { [target = running.target, primaryTerm, member] in
                await Self.commit(to: target, primaryTerm: primaryTerm, member: member)
            }
            return nil
        case .checking, .waiting:
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
    }

    /// Runs one coordinator call in a task; its answer waits in the mailbox for `advance`.
    private func call(_ operation: @escaping @Sendable () async -> Answer) {
        Task { [mailbox, wake] in
            let answer = await operation()
            mailbox.answer.withLock { $0 = answer }
            wake()
        }
    }

    /// The transaction: the keys read again (the set may have changed), then the `handover`
    /// key naming the target (or the first in-sync standby) written with the primary key
    /// deleted, guarded by this term's primary key.
    private static func commit(
        to target: String,
        primaryTerm: PrimaryTerm,
        member: String
    ) async -> Answer {
        let candidates = await Self.candidates(for: target, primaryTerm: primaryTerm, member: member)
        if let refusal = candidates.refusal {
            // Still primary (a lost primary key says so): the set changed meanwhile.
            return .notCommitted(refusal, resumesIngest: refusal.code != .notPrimary)
        }
        let record = HandOverRecord(term: primaryTerm.term, to: target.isEmpty ? candidates.members[0] : target)
        do {
            let written = try await primaryTerm.coordinator.handOver(record, guardRevision: primaryTerm.guardRevision)
            guard written else {
                return .notCommitted(
                    ErrorReply(code: .notPrimary, message: "demote: this member is no longer primary"),
                    resumesIngest: false
                )
            }
            return .committed(record)
        } catch {
            // The outcome is unknown: if it committed the watcher sees the keys and the loop
            // ends; if not, this member is still primary and takes ingest again.
            return .notCommitted(
                ErrorReply(code: .unavailable, message: "demote: the coordination service did not answer: \(error)"),
                resumesIngest: true
            )
        }
    }

    private func fail(_ running: Running, _ error: ErrorReply, resumingIngest: Bool) -> Outcome {
        self.running = nil
        if resumingIngest { gate.pauseIngest(false) }
        logger.warning("no hand-over", metadata: ["error": "\(error.message)"])
        return .failed(error, requesters: running.requesters)
    }

    /// The in-sync standbys recorded for this term that `target` ("" for any) may be, read from
    /// the keys, or why there is none.
    private static func candidates(
        for target: String,
        primaryTerm: PrimaryTerm,
        member: String
    ) async -> (members: [String], refusal: ErrorReply?) {
        let state: OrdinalState
        do {
            state = try await primaryTerm.coordinator.state()
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
