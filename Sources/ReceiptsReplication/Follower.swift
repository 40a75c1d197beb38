package import ReceiptLog
package import ReceiptsWire

/// A standby's side of a replication session without its socket (deploy/REPLICATION.md,
/// sections 4.3 and 4.4): it opens a session with a `Follow`, appends the primary's records at
/// their positions, receives the primary's snapshot into an `IncomingSnapshot`, tracks the
/// primary's acknowledged position `A`, and says when to confirm its own positions.
///
/// Fencing: it takes records and heartbeats only from the session the primary accepted, and only
/// while that session's term is at least the highest term this member has seen; a higher term
/// seen anywhere ends a session of a lower one. What the log must do that needs it closed
/// (cutting its tail back, installing a snapshot) it hands to its owner, `StandbyReplica`, as a
/// `Step`. Single-threaded.
package final class Follower {
    /// What the owner must do after a message.
    package enum Step {
        /// Nothing more.
        case none
        /// Cut the log back to this position (it holds records the primary's history does not),
        /// then go on with the session.
        case cut(to: UInt64)
        /// Install the received snapshot (the log is replaced by it), with the primary's terms
        /// before its position and its engine settings, then go on with the session.
        case seed(IncomingSnapshot, terms: [TermStart], engineSettings: String)
        /// The primary refused the session; follow again after a pause.
        case refused(ErrorReply)
    }

    /// The state of the session.
    private enum Session {
        case none
        /// A `Follow` went out; waiting for the answer.
        case opening(id: UInt64, sentAt: Int64)
        /// The primary accepted it, for `term`.
        case open(id: UInt64, term: UInt64)
    }

    private let settings: ReplicationSettings
    private let workerIndex: Int
    private var session = Session.none
    /// Whether the primary announced a snapshot that is not installed yet: acks then confirm
    /// nothing (the log still holds what the snapshot replaces), and only keep the session alive.
    private var snapshotPending = false
    /// The snapshot being received, and the terms and settings its first chunk carried.
    private var incoming: (snapshot: IncomingSnapshot, terms: [TermStart], engineSettings: String)?
    /// The highest term this member has seen: its log's, or any primary's.
    package private(set) var knownTerm: UInt64
    /// The primary's acknowledged position, as last heard; the standby applies up to it.
    package private(set) var acknowledged: UInt64 = 0
    /// The primary's appended end, as last heard, for the lag.
    package private(set) var primaryEnd: UInt64 = 0
    /// When the primary was last heard from (monotonic milliseconds).
    package private(set) var lastHeard: Int64 = 0
    /// What the last ack said, and when it went.
    private var lastAck: (durable: UInt64, applied: UInt64, at: Int64) = (0, 0, 0)

    /// A follower for `settings.member` of ordinal `workerIndex`, whose log knows `knownTerm`.
    package init(settings: ReplicationSettings, workerIndex: Int, knownTerm: UInt64) {
        self.settings = settings
        self.workerIndex = workerIndex
        self.knownTerm = knownTerm
    }

    /// Whether a session is accepted and alive.
    package var isFollowing: Bool {
        if case .open = session { return true }
        return false
    }

    /// Opens a new session: the `Follow` to send, saying where this member's log stands.
    ///
    /// - Parameters:
    ///   - terms: The log's term history.
    ///   - engineSettings: The text of the member's `engine-settings` file; empty for a new member.
    package func follow(log: ReceiptLog, terms: TermHistory, engineSettings: String, now: Int64) -> ReplicationRequest {
        incoming?.snapshot.discard()
        incoming = nil
        knownTerm = max(knownTerm, terms.last.term)
        let id = UInt64.random(in: 1...UInt64.max)
        session = .opening(id: id, sentAt: now)
        lastHeard = now
        return .follow(
            ReplicationRequest.Follow(
                session: id,
                member: settings.member,
                workerIndex: workerIndex,
                knownTerm: knownTerm,
                terms: terms.entries.map { TermStart(term: $0.term, start: $0.start, member: $0.member) },
                logEnd: log.appendedPosition.offset,
                durable: log.durablePosition.offset,
                engineSettings: engineSettings,
                windowBytes: settings.windowBytes
            )
        )
    }

    /// Whether the session (or the attempt to open one) has been silent for the timeout.
    package func isSilent(now: Int64) -> Bool {
        now - lastHeard > settings.timeoutMilliseconds
    }

    /// Ends the session: nothing more is taken from it (a higher term was seen, or it timed out).
    package func end() {
        incoming?.snapshot.discard()
        incoming = nil
        snapshotPending = false
        session = .none
    }

    /// Takes one message from the primary.
    ///
    /// - Returns: What the owner must do with the log.
    /// - Throws: `LogError` when the log refuses the records (the session is ended; follow again).
    package func receive(
        _ message: ReplicationMessage,
        log: ReceiptLog,
        directory: String,
        now: Int64
    ) throws(LogError) -> Step {
        switch message {
        case .accepted(let accepted):
            guard case .opening(let id, _) = session, accepted.session == id else { return .none }
            guard accepted.term >= knownTerm else {
                // A primary of an older term: a stale one. Confirm nothing to it.
                end()
                return .none
            }
            knownTerm = accepted.term
            session = .open(id: id, term: accepted.term)
            lastHeard = now
            lastAck = (0, 0, 0)
            snapshotPending = accepted.snapshotFirst
            if accepted.snapshotFirst { return .none }
            return accepted.continueAt < log.appendedPosition.offset ? .cut(to: accepted.continueAt) : .none
        case .refused(let id, let error):
            guard case .opening(let opening, _) = session, opening == id else { return .none }
            knownTerm = max(knownTerm, error.term)
            session = .none
            return .refused(error)
        case .records(let records):
            guard accepts(records.session, term: records.term, now: now) else { return .none }
            acknowledged = max(acknowledged, records.acknowledged)
            primaryEnd = records.primaryEnd
            // Array.withUnsafeBytes rethrows untyped errors only: carry the log's out in a Result.
            let appended = records.bytes.withUnsafeBytes { bytes in
                Result { () throws(LogError) in try log.appendShipped(bytes, at: LogPosition(offset: records.start)) }
            }
            if case .failure(let error) = appended {
                end()
                throw error
            }
            return .none
        case .heartbeat(let heartbeat):
            guard accepts(heartbeat.session, term: heartbeat.term, now: now) else { return .none }
            acknowledged = max(acknowledged, heartbeat.acknowledged)
            primaryEnd = heartbeat.primaryEnd
            return .none
        case .snapshot(let chunk):
            guard case .open(let id, _) = session, chunk.session == id else { return .none }
            lastHeard = now
            do throws(LogError) {
                if chunk.offset == 0 {
                    incoming?.snapshot.discard()
                    incoming = (
                        try IncomingSnapshot(
                            directory: directory,
                            position: LogPosition(offset: chunk.position),
                            fileBytes: chunk.fileBytes
                        ),
                        chunk.terms,
                        chunk.engineSettings
                    )
                }
                guard let incoming else {
                    throw LogError(
                        code: .invalidArgument,
                        message: "a snapshot chunk at \(chunk.offset) came without its start"
                    )
                }
                try chunk.bytes.withUnsafeBytes { bytes in
                    Result { () throws(LogError) in try incoming.snapshot.write(bytes, at: chunk.offset) }
                }.get()
                guard incoming.snapshot.isComplete else { return .none }
                self.incoming = nil
                snapshotPending = false
                return .seed(incoming.snapshot, terms: incoming.terms, engineSettings: incoming.engineSettings)
            } catch {
                end()
                throw error
            }
        }
    }

    /// Whether a message of `session` and `term` belongs to the open session.
    private func accepts(_ id: UInt64, term: UInt64, now: Int64) -> Bool {
        guard case .open(let open, let sessionTerm) = session, open == id else { return false }
        guard term == sessionTerm, term >= knownTerm else {
            if term > knownTerm { knownTerm = term }
            end()
            return false
        }
        lastHeard = now
        return true
    }

    /// The ack to send now, if one is due: when the log's durable position or what was applied
    /// moved (at most one a millisecond), and at least every heartbeat interval (with zeros while
    /// a snapshot is pending).
    package func acknowledgement(log: ReceiptLog, applied: UInt64, now: Int64) -> ReplicationRequest? {
        guard case .open(let id, _) = session else { return nil }
        if snapshotPending {
            guard now - lastAck.at >= settings.heartbeatMilliseconds else { return nil }
            lastAck.at = now
            return .ack(ReplicationRequest.Ack(session: id, appended: 0, durable: 0, applied: 0))
        }
        let durable = log.durablePosition.offset
        let moved = durable != lastAck.durable || applied != lastAck.applied
        guard (moved && now > lastAck.at) || now - lastAck.at >= settings.heartbeatMilliseconds else { return nil }
        lastAck = (durable, applied, now)
        return .ack(
            ReplicationRequest.Ack(
                session: id,
                appended: log.appendedPosition.offset,
                durable: durable,
                applied: applied
            )
        )
    }
}
