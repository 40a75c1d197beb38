package import Logging
package import ReceiptLog
package import ReceiptsWire

/// The primary's side of replication without its socket (deploy/REPLICATION.md, section 4): it
/// answers each standby's `Follow` with where to continue from, then ships the log's durable
/// records from there, as written, within the standby's credit, with the newest snapshot first
/// when compaction already deleted what the standby lacks; it keeps a `LogPin` at each standby's
/// confirmed position and sends heartbeats when idle.
///
/// `ShippingThread` feeds it requests and sends what it returns; tests drive it directly. It
/// never touches the engine. Single-threaded.
package final class Shipper {
    /// A message for one standby, by the routing id of its connection.
    package struct Outgoing {
        package var peer: [UInt8]
        package var message: ReplicationMessage
    }

    /// One standby's session.
    private final class Session {
        let peer: [UInt8]
        let id: UInt64
        let member: String
        let window: UInt64
        var pin: LogPin
        /// Reads the records from `sent` on; nil while a snapshot ships.
        var cursor: LogCursor?
        var snapshot: ShippedSnapshot?
        var snapshotOffset: UInt64 = 0
        /// Where the next record to send starts.
        var sent: UInt64
        var appended: UInt64
        var durable: UInt64
        var applied: UInt64
        var lastHeard: Int64
        var lastSent: Int64
        /// When the standby last confirmed everything the primary held durably.
        var caughtUpAt: Int64
        /// Messages the socket could not take yet; they go first.
        var unsent: [ReplicationMessage] = []

        /// - Parameters:
        ///   - continueAt: Where shipping continues: the divergence point, or the position of
        ///     the snapshot sent first.
        ///   - agreed: Where the two histories part: the standby holds the primary's records up to
        ///     here and no further (with a snapshot first, its log beyond is replaced, so it claims
        ///     nothing past it until it confirms the snapshot's records).
        init(
            peer: [UInt8],
            follow: ReplicationRequest.Follow,
            pin: LogPin,
            continueAt: UInt64,
            agreed: UInt64,
            now: Int64
        ) {
            self.peer = peer
            id = follow.session
            member = follow.member
            window = max(follow.windowBytes, 1)
            self.pin = pin
            sent = continueAt
            appended = min(follow.logEnd, agreed)
            durable = min(follow.durable, agreed)
            applied = durable
            lastHeard = now
            lastSent = now
            caughtUpAt = now
        }
    }

    /// A pin kept for a standby whose session ended, so that it can continue where it was.
    private struct ParkedPin {
        var pin: LogPin
        var since: Int64
    }

    private let log: ReceiptLog
    private let settings: ReplicationSettings
    private let workerIndex: Int
    private let engineSettings: String
    private let logger: Logger
    /// The primary's acknowledged position `A` (its frontier), sent to standbys.
    private let acknowledged: () -> UInt64
    /// The primary's terms; its last term is the one every message carries.
    package private(set) var terms: TermHistory
    /// How the shipper takes part in acknowledgements: the gate it sets, the recorder of the
    /// in-sync set, and the lease that bounds them.
    package struct Acknowledging {
        /// Where the shipper tells the pipeline what acknowledgements may reach.
        package var gate: ReplicationGate
        /// Records the in-sync set in the coordination service; nil when nothing records it.
        package var recorder: InSyncRecorder?
        /// The set recorded when this primary's term began.
        package var recorded: Set<String>?
        /// This member's lease deadline (nanoseconds on the clock of the shipper's `now`, which
        /// is in milliseconds); nil without a lease.
        package var leaseDeadline: (@Sendable () -> UInt64)?

        package init(
            gate: ReplicationGate,
            recorder: InSyncRecorder? = nil,
            recorded: Set<String>? = nil,
            leaseDeadline: (@Sendable () -> UInt64)? = nil
        ) {
            self.gate = gate
            self.recorder = recorder
            self.recorded = recorded
            self.leaseDeadline = leaseDeadline
        }
    }

    private let acknowledging: Acknowledging?
    /// The standbys acknowledgements wait for (or, under `--replication-ack local`, that may be
    /// promoted); nil without `acknowledging`.
    package private(set) var inSync: InSyncSet?
    /// Where the gate stood when the lease was last certainly alive, while it is not.
    private var frozenAt: UInt64?
    /// What the in-sync set allowed last.
    package private(set) var verdict: InSyncSet.Verdict?
    /// Who was in the set, and whether it stalled, when last logged.
    private struct SetShape: Equatable {
        var members: Set<String>
        var joining: Set<String>
        var stalled: Bool
        var unsynced: Bool
    }
    private var reportedShape: SetShape?
    /// Where the metrics go; nil in tests that do not look at them.
    private let metrics: (any ShippingMetrics)?
    /// When the metrics were last sampled (monotonic milliseconds).
    private var sampledAt: Int64
    /// When the gate was last updated, and the time since spent unsynced or stalled, not yet
    /// added to the metrics (seconds).
    private var gateUpdatedAt: Int64
    private var unsyncedTime = 0.0
    private var stalledTime = 0.0
    private var sessions: [String: Session] = [:]
    private var parked: [String: ParkedPin] = [:]
    private var chunk: UnsafeMutableRawBufferPointer

    /// A shipper for `log`, whose primary has `terms`.
    ///
    /// - Parameters:
    ///   - engineSettings: The text of the primary's `engine-settings` file; a standby's must
    ///     match, or be empty (a new member).
    ///   - acknowledging: The gate, the recorder and the lease; nil when acknowledgements wait
    ///     for nothing but the primary's log (fixed roles without a gate).
    ///   - metrics: Where the standbys' lag and the in-sync set go; nil in tests.
    ///   - now: Monotonic milliseconds, the clock of every later `now` (and of the lease deadline).
    ///   - acknowledged: The primary's frontier `A`, read on the shipper's thread.
    package init(
        log: ReceiptLog,
        terms: TermHistory,
        settings: ReplicationSettings,
        workerIndex: Int,
        engineSettings: String,
        logger: Logger,
        acknowledging: Acknowledging? = nil,
        metrics: (any ShippingMetrics)? = nil,
        now: Int64,
        acknowledged: @escaping () -> UInt64
    ) {
        self.acknowledging = acknowledging
        self.metrics = metrics
        sampledAt = now
        gateUpdatedAt = now
        inSync = acknowledging.map {
            InSyncSet(
                position: $0.gate.replicatedPosition,
                acknowledgement: settings.acknowledgement,
                fallback: settings.fallback,
                timeoutMilliseconds: settings.timeoutMilliseconds,
                recorded: $0.recorded,
                now: now
            )
        }
        self.log = log
        self.terms = terms
        self.settings = settings
        self.workerIndex = workerIndex
        self.engineSettings = engineSettings
        self.logger = logger
        self.acknowledged = acknowledged
        chunk = .allocate(byteCount: ReplicationFrames.maxChunkBytes, alignment: 16)
        // Before anything is served: a new primary's recorded standbys gate from the start (at
        // position 0 until they confirm), so nothing only this member holds is acknowledged.
        updateGate(now: now)
    }

    deinit {
        chunk.deallocate()
    }

    /// The standbys with a session, by member name.
    package var progress: [StandbyProgress] {
        sessions.values.map {
            StandbyProgress(
                member: $0.member,
                session: $0.id,
                appended: $0.appended,
                durable: $0.durable,
                applied: $0.applied,
                lastHeard: $0.lastHeard
            )
        }.sorted { $0.member < $1.member }
    }

    /// Takes the primary's new terms (after a `termStarted` record is durable).
    package func update(terms: TermHistory) {
        self.terms = terms
    }

    // MARK: - Requests

    /// Takes one request from the standby connected as `peer`.
    ///
    /// - Returns: The answer to a `Follow` (accepted or refused); nothing for an ack.
    package func receive(_ request: ReplicationRequest, from peer: [UInt8], now: Int64) -> Outgoing? {
        switch request {
        case .follow(let follow):
            return Outgoing(peer: peer, message: accept(follow, from: peer, now: now))
        case .ack(let ack):
            take(ack, from: peer, now: now)
            updateGate(now: now)
            return nil
        }
    }

    /// Recomputes the in-sync set, proposes it for recording when it changed, and tells the gate
    /// what it allows: nothing further once the lease deadline passed (section 7.3).
    private func updateGate(now: Int64) {
        guard let acknowledging, var set = inSync else { return }
        if let confirmed = acknowledging.recorder?.takeConfirmed() { set.confirmRecorded(confirmed) }
        let verdict = set.update(
            standbys: progress,
            acknowledged: acknowledged(),
            primaryDurable: log.durablePosition.offset,
            now: now
        )
        if let recorder = acknowledging.recorder, set.wanted != set.recorded { recorder.propose(set.wanted) }
        inSync = set
        let shape = SetShape(
            members: Set(set.members.keys),
            joining: Set(set.joining.keys),
            stalled: verdict.stalled,
            unsynced: verdict.unsynced
        )
        if shape != reportedShape {
            reportedShape = shape
            logger.info(
                "in-sync standbys changed",
                metadata: [
                    "replication.in_sync": "\(set.members.keys.sorted())",
                    "replication.joining": "\(set.joining.keys.sorted())",
                    "replication.stalled": "\(verdict.stalled)", "replication.unsynced": "\(verdict.unsynced)",
                ]
            )
        }
        // The time since the last update counts as the verdict then was.
        let elapsed = Double(max(0, now - gateUpdatedAt)) / 1000
        gateUpdatedAt = now
        if self.verdict?.unsynced == true { unsyncedTime += elapsed }
        if self.verdict?.stalled == true { stalledTime += elapsed }
        self.verdict = verdict
        sampleMetrics(set, now: now)
        let gate = acknowledging.gate
        // `now` is in whole milliseconds: the latest instant it may stand for is judged.
        if let deadline = acknowledging.leaseDeadline?(), UInt64(max(now + 1, 0)) * 1_000_000 > deadline {
            if frozenAt == nil {
                frozenAt = min(gate.replicatedPosition, log.durablePosition.offset)
                metrics?.record(role: .deposed, term: terms.last.term)
                logger.warning("the lease was not renewed in time: acknowledging nothing further")
            }
            gate.update(replicatedPosition: frozenAt ?? 0, refusal: .leaseExpired)
            return
        }
        if frozenAt != nil {
            frozenAt = nil
            metrics?.record(role: .primary, term: terms.last.term)
            logger.info("the lease is renewed: acknowledging again")
        }
        gate.update(replicatedPosition: verdict.replicatedPosition, refusal: verdict.stalled ? .noStandbyInSync : .none)
    }

    /// Samples the replication metrics about once a second: each standby's lag, the in-sync
    /// set's size, and the time spent without a standby in sync since the last sample.
    private func sampleMetrics(_ set: InSyncSet, now: Int64) {
        guard let metrics, now - sampledAt >= metrics.sampleIntervalMilliseconds else { return }
        sampledAt = now
        let end = log.appendedPosition.offset
        for session in sessions.values {
            let behind = session.durable < log.durablePosition.offset
            metrics.recordLag(
                member: session.member,
                bytes: end - min(session.durable, end),
                seconds: behind ? Double(now - session.caughtUpAt) / 1000 : 0
            )
        }
        metrics.forgetLags(except: Set(sessions.keys))
        metrics.recordInSync(set.recorded?.count ?? set.members.count)
        metrics.addTime(unsynced: unsyncedTime, stalled: stalledTime)
        unsyncedTime = 0
        stalledTime = 0
    }

    /// Opens a session for `follow`, or says why not.
    private func accept(_ follow: ReplicationRequest.Follow, from peer: [UInt8], now: Int64) -> ReplicationMessage {
        let term = terms.last.term
        func refuse(_ code: ErrorReply.Code, _ message: String) -> ReplicationMessage {
            logger.warning(
                "replication follow refused",
                metadata: ["replication.member": "\(follow.member)", "error": "\(message)"]
            )
            return .refused(session: follow.session, error: ErrorReply(code: code, message: message, term: term))
        }
        guard follow.workerIndex == workerIndex else {
            return refuse(
                .invalidArgument,
                "worker index \(follow.workerIndex), but this primary serves \(workerIndex)"
            )
        }
        guard follow.engineSettings.isEmpty || follow.engineSettings == engineSettings else {
            return refuse(
                .invalidArgument,
                "engine settings differ: the standby has \"\(follow.engineSettings)\", the primary \"\(engineSettings)\""
            )
        }
        guard follow.knownTerm <= term else {
            return refuse(.notPrimary, "the standby knows term \(follow.knownTerm), newer than this primary's \(term)")
        }
        let standbyTerms: TermHistory
        do {
            standbyTerms = try TermHistory(
                entries: follow.terms.map { TermHistory.Entry(term: $0.term, start: $0.start, member: $0.member) }
            )
        } catch {
            return refuse(.invalidArgument, "the standby's terms are not a history: \(error)")
        }
        let durable = log.durablePosition.offset
        let divergence = terms.divergence(end: durable, with: standbyTerms, otherEnd: follow.logEnd)
        let session: Session
        do {
            session = try open(follow, from: peer, at: divergence, now: now)
        } catch {
            return refuse(.internal, "cannot ship from \(divergence): \(error)")
        }
        // The member's old pins go only now that the new one holds (a compaction in between
        // would otherwise force a snapshot on an ordinary reconnect).
        parked[follow.member] = nil
        sessions[follow.member] = session
        logger.info(
            "replication session opened",
            metadata: [
                "replication.member": "\(follow.member)", "replication.continue_at": "\(session.sent)",
                "replication.snapshot_first": "\(session.snapshot != nil)", "replication.term": "\(term)",
            ]
        )
        return .accepted(
            ReplicationMessage.FollowAccepted(
                session: follow.session,
                term: term,
                continueAt: session.sent,
                snapshotFirst: session.snapshot != nil
            )
        )
    }

    /// A session reading from `position`, or from the newest snapshot when compaction deleted
    /// the records there.
    private func open(
        _ follow: ReplicationRequest.Follow,
        from peer: [UInt8],
        at position: UInt64,
        now: Int64
    ) throws(LogError) -> Session {
        do {
            let pin = try log.pin(LogPosition(offset: position))
            let cursor = try log.cursor(from: LogPosition(offset: position))
            let session = Session(
                peer: peer,
                follow: follow,
                pin: pin,
                continueAt: position,
                agreed: position,
                now: now
            )
            session.cursor = cursor
            return session
        } catch  where error.code == .compacted {
            guard let snapshot = try log.openNewestSnapshot() else { throw error }
            let session = Session(
                peer: peer,
                follow: follow,
                pin: snapshot.pin,
                continueAt: snapshot.position.offset,
                agreed: position,
                now: now
            )
            session.snapshot = snapshot
            return session
        }
    }

    /// Takes a standby's positions and moves its pin to what it holds durably.
    private func take(_ ack: ReplicationRequest.Ack, from peer: [UInt8], now: Int64) {
        guard let session = sessions.values.first(where: { $0.id == ack.session && $0.peer == peer }) else { return }
        session.lastHeard = now
        guard ack.appended <= session.sent, ack.durable <= ack.appended else {
            logger.warning(
                "replication ack beyond what was sent; session ended",
                metadata: ["replication.member": "\(session.member)", "replication.appended": "\(ack.appended)"]
            )
            sessions[session.member] = nil
            return
        }
        session.appended = max(session.appended, ack.appended)
        session.durable = max(session.durable, ack.durable)
        if session.durable >= log.durablePosition.offset { session.caughtUpAt = now }
        session.applied = max(session.applied, ack.applied)
        if session.snapshot == nil, let pinned = session.pin.position, pinned.offset < session.durable {
            try? session.pin.advance(to: LogPosition(offset: session.durable))
        }
    }

    // MARK: - Shipping

    /// Sends what each session may have now: the snapshot's chunks, then records within the
    /// standby's credit, or a heartbeat when nothing went out for a heartbeat interval. Ends
    /// sessions silent for the timeout (keeping their pins for the pin timeout).
    ///
    /// - Parameter send: Sends one message; returns false when the socket cannot take it now
    ///   (it is offered again first at the next call).
    package func ship(now: Int64, send: (Outgoing) -> Bool) {
        for (member, session) in sessions where now - session.lastHeard > settings.timeoutMilliseconds {
            logger.info("replication session timed out", metadata: ["replication.member": "\(member)"])
            sessions[member] = nil
            parked[member] = ParkedPin(pin: session.pin, since: now)
        }
        for (member, pin) in parked where now - pin.since > settings.pinTimeoutMilliseconds {
            logger.warning(
                "replication pin released: the standby was away too long and will catch up from a snapshot",
                metadata: ["replication.member": "\(member)"]
            )
            parked[member] = nil
        }
        updateGate(now: now)
        for session in sessions.values {
            do {
                try ship(session, now: now, send: send)
            } catch {
                logger.warning(
                    "replication session ended: its records cannot be read",
                    metadata: ["replication.member": "\(session.member)", "error": "\(error)"]
                )
                sessions[session.member] = nil
            }
        }
    }

    private func ship(_ session: Session, now: Int64, send: (Outgoing) -> Bool) throws {
        /// Sends `messages` in order; keeps what the socket refused, from the first refusal on.
        func offer(_ messages: [ReplicationMessage]) -> Bool {
            for (index, message) in messages.enumerated() {
                guard send(Outgoing(peer: session.peer, message: message)) else {
                    session.unsent = Array(messages[index...])
                    return false
                }
                session.lastSent = now
            }
            return true
        }
        if !session.unsent.isEmpty {
            let unsent = session.unsent
            session.unsent = []
            guard offer(unsent) else { return }
        }
        if let snapshot = session.snapshot {
            guard try shipSnapshot(snapshot, session, offer: { offer([$0]) }) else { return }
        }
        guard let cursor = session.cursor else { return }
        var offered = true
        while offered, session.sent < session.appended &+ session.window {
            let credit = min(
                session.appended &+ session.window - session.sent,
                UInt64(ReplicationFrames.recordsBatchBytes)
            )
            var messages: [ReplicationMessage] = []
            // One message per run of records the cursor hands out (a run ends at a segment's end).
            _ = try cursor.readRaw(maxBytes: Int(credit)) { bytes, start, _ in
                messages.append(
                    .records(
                        ReplicationMessage.Records(
                            session: session.id,
                            term: terms.last.term,
                            start: start.offset,
                            bytes: Array(bytes),
                            acknowledged: acknowledged(),
                            primaryEnd: log.appendedPosition.offset
                        )
                    )
                )
            }
            guard !messages.isEmpty else { break }
            session.sent = cursor.position.offset
            offered = offer(messages)
        }
        if offered, now - session.lastSent >= settings.heartbeatMilliseconds {
            _ = offer([
                .heartbeat(
                    ReplicationMessage.Heartbeat(
                        session: session.id,
                        term: terms.last.term,
                        acknowledged: acknowledged(),
                        primaryEnd: log.appendedPosition.offset,
                        primaryDurable: log.durablePosition.offset
                    )
                )
            ])
        }
    }

    /// Sends the snapshot's remaining chunks; once the last went, opens the cursor at the
    /// snapshot's position. Returns whether the snapshot is all sent.
    private func shipSnapshot(
        _ snapshot: ShippedSnapshot,
        _ session: Session,
        offer: (ReplicationMessage) -> Bool
    ) throws -> Bool {
        while session.snapshotOffset < snapshot.fileBytes {
            let count = try snapshot.read(at: session.snapshotOffset, into: chunk)
            guard count > 0 else {
                throw LogError(
                    code: .corruption,
                    message: "the snapshot file ended early",
                    offset: session.snapshotOffset
                )
            }
            let first = session.snapshotOffset == 0
            let message = ReplicationMessage.snapshot(
                ReplicationMessage.SnapshotChunk(
                    session: session.id,
                    position: snapshot.position.offset,
                    fileBytes: snapshot.fileBytes,
                    offset: session.snapshotOffset,
                    bytes: Array(UnsafeRawBufferPointer(rebasing: chunk[..<count])),
                    terms: first ? startsBefore(snapshot.position.offset) : [],
                    engineSettings: first ? engineSettings : ""
                )
            )
            session.snapshotOffset += UInt64(count)
            guard offer(message) else { return false }
        }
        session.cursor = try log.cursor(from: snapshot.position)
        session.snapshot = nil
        return true
    }

    /// The primary's terms that start before `position`, for a standby seeded at it.
    private func startsBefore(_ position: UInt64) -> [TermStart] {
        terms.prefix(before: position).entries.map { TermStart(term: $0.term, start: $0.start, member: $0.member) }
    }
}
