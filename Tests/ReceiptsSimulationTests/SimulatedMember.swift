import ReceiptsCore
import ReceiptsTestKit

@testable import ReceiptsReplication

/// One member of a simulated ordinal: the real `MemberMachine` decides its role against a real
/// `InMemoryCoordinator` on the simulation's clock; as primary, the real `InSyncSet` and lease
/// deadline decide what it may acknowledge; a real `ReceiptEngine` applies its log's events.
/// Its log and the replication protocol are a model: a list of `SimulatedEntry` and the
/// messages of `SimulatedMessage`, with the rules of deploy/REPLICATION.md (ship durable
/// records, confirm durable positions, cut back to the primary's history on rejoin, fence by
/// term).
final class SimulatedMember {
    /// The primary's side of one standby's session.
    struct Session {
        var id: UInt64
        /// Where the next record to ship starts.
        var next: UInt64
        var appended: UInt64 = 0
        var durable: UInt64 = 0
        var lastHeard: Int64
        var lastSent: Int64
    }

    /// What a primary keeps for its term.
    struct Primary {
        var term: UInt64
        var guardRevision: Int64
        /// The lease the primary key is attached to.
        var lease: Int64
        var inSync: InSyncSet
        var sessions: [String: Session] = [:]
        /// What the in-sync set allows (`ReplicationGate`); it stays where it stood while the
        /// lease is not certainly alive.
        var gate: UInt64
        /// The acknowledged position `A`: durable here and allowed by the gate.
        var acknowledged: UInt64 = 0
        /// The last verdict said no standby was heard for the timeout: new ingest is refused.
        var stalled = false
        /// While a hand-over runs, when it gives up (this member's milliseconds); new ingest is
        /// refused meanwhile.
        var handOverDeadline: Int64?
        /// Frames waiting for their events to be acknowledged: the gateway and the position the
        /// frame's last event ends at.
        var waiting: [(gateway: String, events: [UInt64], position: UInt64)] = []
    }

    /// What a standby keeps for the primary it follows.
    struct Standby {
        var primary: PrimaryRecord
        var session: UInt64
        var accepted = false
        var lastHeard: Int64
        /// When the primary last sent something in an accepted session, or when the member came
        /// back from a pause after that: the silence a takeover counts (`StandbyLoop`); nil
        /// until the primary is first heard from.
        var heardFromPrimary: Int64?
        /// The member's last turn in this role.
        var lastTurn: Int64
        var lastAck: (appended: UInt64, durable: UInt64, at: Int64) = (0, 0, 0)
    }

    /// The role the member serves in, with what it keeps for it.
    enum Serving {
        case none
        case primary(Primary)
        case standby(Standby)

        var isNone: Bool {
            if case .none = self { return true }
            return false
        }
    }

    static let timeoutMilliseconds: Int64 = 1000
    static let heartbeatMilliseconds: Int64 = 100
    static let shippingWindow: UInt64 = 32
    /// The coordinator's lease TTL (`InMemoryCoordinator`'s default, as `--etcd-lease-ttl-s`'s).
    static let leaseTTLSeconds: Int64 = 3
    /// The most effects a member carries out in one turn (a resign that cannot reach the
    /// coordinator and a read of the keys again could otherwise go round).
    static let effectsPerTurn = 8

    let name: String
    /// This member as a primary record names it (the term is its campaign's).
    let record: PrimaryRecord
    let bug: PlantedBug?
    /// `--replication-takeover-ms`: 0 leaves failover to the lease.
    let takeoverMilliseconds: Int64
    /// How fast this member's clock runs against the store's (1: the same rate).
    let clockRate: Double
    /// The store's clock at this member's current turn or message (milliseconds).
    private var storeNow: Int64 = 0
    private(set) var coordinator: InMemoryCoordinator
    private(set) var machine: MemberMachine
    private(set) var log: [SimulatedEntry] = []
    /// The engine, fed the log's events in order as the pipeline applies them; rebuilt from the
    /// log when the process restarts or the log is cut back, as recovery replays it.
    private(set) var engine = ReceiptEngine()
    /// How many records of `log` the engine has taken.
    private var appliedRecords = 0
    private let workload: SimulatedWorkload
    /// Where each event's record ends in `log`.
    private var positions: [UInt64: UInt64] = [:]
    /// How much of `log` is synced: a crash of the machine keeps no more.
    private(set) var durable: UInt64 = 0
    private(set) var serving = Serving.none
    /// The highest term seen, which fences sessions of older ones (a follower's `knownTerm`).
    private var knownTerm: UInt64 = 0
    /// What the member feeds its machine next: the outcome of the last effect carried out.
    private var pending = MemberMachine.Input.started
    /// The last session id used: each member's ids are its own range.
    private var nextSession: UInt64
    /// Whether this process's coordinator has started (its first lease granted).
    private var coordinatorStarted = false

    /// A member of the ordinal's first member set (so it may start the ordinal), not yet started.
    init(
        name: String,
        index: Int,
        clockRate: Double,
        takeoverMilliseconds: Int64,
        bug: PlantedBug?,
        workload: SimulatedWorkload,
        store: InMemoryCoordinator.Store
    ) {
        self.name = name
        self.workload = workload
        self.takeoverMilliseconds = takeoverMilliseconds
        self.clockRate = clockRate
        self.bug = bug
        record = PrimaryRecord(
            member: name,
            term: 0,
            replication: "sim://\(name)/replication",
            ingest: "sim://\(name)/ingest",
            query: "sim://\(name)/query",
            publish: "sim://\(name)/publish"
        )
        coordinator = InMemoryCoordinator(store: store, ordinal: 0, member: name, leaseTTLSeconds: Self.leaseTTLSeconds)
        machine = MemberMachine(member: record, mayStartOrdinal: true, acknowledgement: .standby)
        nextSession = UInt64(index + 1) << 32
    }

    // MARK: - Life

    /// Starts the process again: a new coordinator (started at its first turn) and a new
    /// machine, on the log it has.
    func restart(store: InMemoryCoordinator.Store) {
        coordinator = InMemoryCoordinator(store: store, ordinal: 0, member: name, leaseTTLSeconds: Self.leaseTTLSeconds)
        machine = MemberMachine(member: record, mayStartOrdinal: true, acknowledgement: .standby)
        serving = .none
        pending = .started
        knownTerm = history.last?.term ?? 0
        coordinatorStarted = false
        engine = ReceiptEngine()
        appliedRecords = 0
    }

    /// The process dies. A crash of the machine loses what was not synced; a crash of the
    /// process only, nothing written.
    func crash(losingUnsynced: Bool) {
        coordinator.abandon()
        serving = .none
        if losingUnsynced { truncate(to: durable) }
    }

    /// Makes everything appended durable (an fsync that completed).
    func sync() {
        durable = UInt64(log.count)
    }

    // MARK: - The log

    /// The log's term history: each `termStarted` record's term and position.
    var history: [TermStartPoint] {
        log.enumerated().compactMap { index, entry in
            if case .termStart = entry.kind { return TermStartPoint(term: entry.term, start: UInt64(index)) }
            return nil
        }
    }

    /// The last term this member's own log says it wrote, as `MemberMachine` reads its
    /// `terms` file.
    private var ownLastTerm: TermHistory.Entry? {
        for (index, entry) in log.enumerated().reversed() {
            if case .termStart(let member) = entry.kind {
                return TermHistory.Entry(term: entry.term, start: UInt64(index), member: member)
            }
        }
        return nil
    }

    private func truncate(to position: UInt64) {
        for entry in log[Int(position)...] {
            if let event = entry.event { positions[event] = nil }
        }
        log.removeLast(log.count - Int(position))
        durable = min(durable, position)
        if Int(position) < appliedRecords {
            if bug != .keepEngineAcrossCutBack { engine = ReceiptEngine() }
            appliedRecords = bug == .keepEngineAcrossCutBack ? Int(position) : 0
        }
    }

    /// Applies the records the engine has not taken yet; an event it takes for a duplicate was
    /// applied twice (the log holds each event once).
    func applyLog(world: ClusterSimulation) {
        while appliedRecords < log.count {
            let entry = log[appliedRecords]
            appliedRecords += 1
            guard case .event(let id, let at) = entry.kind else { continue }
            if engine.replay(workload.event(id), at: Timestamp(milliseconds: at)) == .duplicate {
                world.appliedTwice(id, by: name)
            }
        }
    }

    private func append(_ entry: SimulatedEntry) {
        log.append(entry)
        if let event = entry.event, positions[event] == nil { positions[event] = UInt64(log.count) }
    }

    /// Where the record of `event` ends in the log, if it holds it.
    private func position(of event: UInt64) -> UInt64? {
        positions[event]
    }

    // MARK: - One turn

    /// One turn of the member's loop at `storeNow` (milliseconds on the store's clock): reads
    /// the keys (unless it is cut off from the coordinator), leaves a role they no longer match,
    /// carries out what its machine says next, and serves.
    func turn(at storeNow: Int64, reachesCoordinator: Bool, world: ClusterSimulation) async {
        self.storeNow = storeNow
        let now = localTime(storeNow)
        if !coordinatorStarted {
            // A process that cannot reach the coordinator at its start tries again.
            guard reachesCoordinator, (try? await coordinator.start()) != nil else { return }
            coordinatorStarted = true
        }
        if reachesCoordinator, let state = await world.keys() {
            knownTerm = max(knownTerm, state.term)
            // The watcher's part: keys the role does not match end its loop.
            if machine.observe(state), !serving.isNone {
                world.note(
                    "\(name) leaves its role (keys: primary \(state.primary?.member ?? "none") term \(state.term))"
                )
                end(.left)
            }
        }
        if serving.isNone { await decide(now: now, reachesCoordinator: reachesCoordinator, world: world) }
        switch serving {
        case .none: break
        case .primary(var primary):
            await servePrimary(&primary, now: now, reachesCoordinator: reachesCoordinator, world: world)
            if case .primary = serving { serving = .primary(primary) }
        case .standby(var standby):
            serveStandby(&standby, now: now, world: world)
            if case .standby = serving { serving = .standby(standby) }
        }
    }

    /// The role's loop ends: the machine hears why at the next decision.
    private func end(_ ending: MemberMachine.RoleEnding) {
        serving = .none
        pending = .roleEnded(ending)
    }

    /// What `MemberMachine` says to do, carried out (as `ReplicatedMember` does) until an effect
    /// takes time: a wait, or a role, which lasts for later turns.
    private func decide(now: Int64, reachesCoordinator: Bool, world: ClusterSimulation) async {
        for _ in 0..<Self.effectsPerTurn {
            let facts = MemberMachine.Facts(
                ownLastTerm: ownLastTerm,
                lease: coordinator.lease,
                stopping: false,
                now: now
            )
            var effect = machine.step(pending, facts)
            if bug == .campaignWithoutInSyncCheck, case .wait = effect, let state = machine.keys,
                state.primary == nil, coordinator.lease != 0
            {
                // What the machine would do without its eligibility check.
                effect = machine.campaign(over: state, facts)
            }
            switch effect {
            case .readKeys:
                guard reachesCoordinator, let state = await world.keys() else {
                    pending = .keysUnreadable
                    continue
                }
                pending = .keys(state)
            case .resign(let guardRevision):
                if reachesCoordinator { try? await coordinator.resign(guardRevision: guardRevision) }
                pending = .resigned
            case .takeOver(let record, let state):
                if reachesCoordinator, (try? await coordinator.takeOver(record, over: state)) == true {
                    world.tookOver(term: record.term, by: name)
                }
                pending = .tookOver
            case .wait:
                pending = .waited
                return
            case .campaign(let record, let inSync, let state):
                pending = .campaignEnded(
                    reachesCoordinator ? try? await coordinator.campaign(record, inSync: inSync, over: state) : nil
                )
            case .follow(let primary):
                knownTerm = max(knownTerm, primary.term)
                var standby = Standby(
                    primary: primary,
                    session: 0,
                    lastHeard: now,
                    heardFromPrimary: nil,
                    lastTurn: now
                )
                openSession(&standby, now: now, world: world)
                serving = .standby(standby)
                world.note("\(name) follows \(primary.member) in term \(primary.term)")
                return
            case .serve(let term, let guardRevision, let lease, let recorded):
                promote(term: term, guardRevision: guardRevision, lease: lease, recorded: recorded, now: now)
                world.won(term: term, by: name, holding: Set(log.compactMap(\.event)))
                return
            case .exit:
                return
            }
        }
    }

    // MARK: - Primary

    /// Serves `term`, as `ServiceLoop` starts a primary: the `termStarted` record is appended
    /// and made durable (a new role reopens the log, so all of it is durable), the gate starts
    /// at the durable end, and the in-sync set's first verdict comes before anything is served:
    /// the recorded standbys gate from position 0 until they confirm.
    private func promote(term: UInt64, guardRevision: Int64, lease: Int64, recorded: Set<String>, now: Int64) {
        knownTerm = term
        if bug != .promoteWithoutWritingTerm {
            append(SimulatedEntry(term: term, kind: .termStart(member: name)))
        }
        sync()
        var inSync = InSyncSet(
            position: durable,
            acknowledgement: .standby,
            fallback: .stall,
            timeoutMilliseconds: Self.timeoutMilliseconds,
            recorded: recorded,
            now: now
        )
        let verdict = inSync.update(standbys: [], acknowledged: durable, primaryDurable: durable, now: now)
        let gate = verdict.replicatedPosition
        serving = .primary(
            Primary(
                term: term,
                guardRevision: guardRevision,
                lease: lease,
                inSync: inSync,
                gate: gate,
                acknowledged: min(durable, gate)
            )
        )
    }

    private func servePrimary(
        _ primary: inout Primary,
        now: Int64,
        reachesCoordinator: Bool,
        world: ClusterSimulation
    ) async {
        for (member, session) in primary.sessions where now - session.lastHeard > Self.timeoutMilliseconds {
            primary.sessions[member] = nil
        }
        let progress = primary.sessions.sorted { $0.key < $1.key }.map { member, session in
            StandbyProgress(
                member: member,
                session: session.id,
                appended: session.appended,
                durable: session.durable,
                applied: session.durable,
                lastHeard: session.lastHeard
            )
        }
        let verdict = primary.inSync.update(
            standbys: progress,
            acknowledged: primary.acknowledged,
            primaryDurable: durable,
            now: now
        )
        if reachesCoordinator, primary.inSync.wanted != primary.inSync.recorded {
            let wanted = primary.inSync.wanted
            let inSync = InSyncRecord(term: primary.term, standbys: wanted.sorted(), ack: "standby")
            if await world.record(inSync, by: coordinator, guardRevision: primary.guardRevision) {
                primary.inSync.confirmRecorded(wanted)
            }
        }
        primary.stalled = verdict.stalled
        let leaseAlive = isLeaseAlive(primary)
        if leaseAlive || bug == .acknowledgeAfterLeaseDeadline {
            primary.gate = bug == .acknowledgeBeforeStandbyConfirms ? .max : verdict.replicatedPosition
        }
        primary.acknowledged = min(durable, primary.gate)
        let acknowledged = primary.acknowledged
        let (ready, waiting) = (
            primary.waiting.filter { $0.position <= acknowledged },
            primary.waiting.filter { $0.position > acknowledged }
        )
        primary.waiting = waiting
        for frame in ready {
            world.acknowledge(frame.events, member: name, term: primary.term)
            world.send(from: name, to: frame.gateway, .acknowledged(events: frame.events))
        }
        ship(&primary, now: now, world: world)
        if primary.handOverDeadline != nil {
            await continueHandOver(&primary, now: now, reachesCoordinator: reachesCoordinator, world: world)
        }
    }

    /// Starts a switchover (`receiptctl demote`) if this member serves as primary.
    func demote(at storeNow: Int64) -> Bool {
        guard case .primary(var primary) = serving, primary.handOverDeadline == nil else { return false }
        primary.handOverDeadline = localTime(storeNow) + HandOverRecord.confirmationLimitMilliseconds
        serving = .primary(primary)
        return true
    }

    /// As `HandOver`: once everything appended is acknowledged (so every recorded in-sync
    /// standby holds the whole log), hands the ordinal to the first of them with the guarded
    /// transaction, and the primary role ends; past the limit, ingest is taken again.
    private func continueHandOver(
        _ primary: inout Primary,
        now: Int64,
        reachesCoordinator: Bool,
        world: ClusterSimulation
    ) async {
        guard let deadline = primary.handOverDeadline, now <= deadline else {
            primary.handOverDeadline = nil
            world.note("\(name) gives up handing over")
            return
        }
        guard reachesCoordinator, primary.acknowledged >= UInt64(log.count),
            let target = (primary.inSync.recorded ?? []).sorted().first
        else { return }
        let record = HandOverRecord(term: primary.term, to: target)
        guard (try? await coordinator.handOver(record, guardRevision: primary.guardRevision)) == true else { return }
        world.note("\(name) hands term \(primary.term) over to \(target)")
        end(.handedOver)
    }

    /// Whether the lease of the primary's key is certainly alive (section 7.3).
    ///
    /// The coordinator computes the deadline on the store's clock, as `LeaseDeadline.after` from
    /// the renewal's send time; this member measures the time since that send on its own clock,
    /// which runs at `clockRate`: the check a member makes with a clock that drifts.
    private func isLeaseAlive(_ primary: Primary) -> Bool {
        guard coordinator.lease == primary.lease else { return false }
        let deadline = coordinator.leaseDeadline
        let ttl = UInt64(Self.leaseTTLSeconds) * 1_000_000_000
        let alive = ttl - LeaseDeadline.marginNanoseconds(ttlSeconds: Self.leaseTTLSeconds)
        let sent = deadline >= alive ? deadline - alive : 0
        let elapsed = UInt64(storeNow) * 1_000_000 >= sent ? UInt64(storeNow) * 1_000_000 - sent : 0
        return Double(elapsed) * clockRate <= Double(bug == .leaseDeadlineWithoutMargin ? ttl : alive)
    }

    /// Milliseconds on this member's clock at `storeNow` on the store's.
    private func localTime(_ storeNow: Int64) -> Int64 {
        Int64((Double(storeNow) * clockRate).rounded(.down))
    }

    /// Ships each accepted session its durable records within the window, or a heartbeat.
    private func ship(_ primary: inout Primary, now: Int64, world: ClusterSimulation) {
        for (member, var session) in primary.sessions.sorted(by: { $0.key < $1.key }) {
            let end = max(session.next, min(durable, session.appended + Self.shippingWindow))
            let entries = Array(log[Int(session.next)..<Int(end)])
            if !entries.isEmpty || now - session.lastSent >= Self.heartbeatMilliseconds {
                // Records without entries are the heartbeat.
                world.send(
                    from: name,
                    to: member,
                    .records(
                        session: session.id,
                        term: primary.term,
                        start: session.next,
                        entries: entries,
                        acknowledged: primary.acknowledged
                    )
                )
                session.next = end
                session.lastSent = now
            }
            primary.sessions[member] = session
        }
    }

    /// Where a standby with `terms` and `end` continues: the end of the latest term both logs
    /// hold, in the shorter of the two (section 4.3's divergence point).
    private func continuation(terms: [TermStartPoint], end: UInt64) -> UInt64 {
        let mine = history
        for (index, theirs) in terms.enumerated().reversed() {
            guard let ours = mine.firstIndex(where: { $0.term == theirs.term }) else { continue }
            let theirEnd = index + 1 < terms.count ? terms[index + 1].start : end
            let ourEnd = ours + 1 < mine.count ? mine[ours + 1].start : UInt64(log.count)
            return min(theirEnd, ourEnd)
        }
        return 0
    }

    // MARK: - Standby

    private func openSession(_ standby: inout Standby, now: Int64, world: ClusterSimulation) {
        nextSession += 1
        standby.session = nextSession
        standby.accepted = false
        standby.lastHeard = now
        world.send(
            from: name,
            to: standby.primary.member,
            .follow(
                session: standby.session,
                knownTerm: knownTerm,
                terms: history,
                end: UInt64(log.count),
                durable: durable
            )
        )
    }

    private func serveStandby(_ standby: inout Standby, now: Int64, world: ClusterSimulation) {
        // A member that was itself paused counts the primary's silence again from now.
        if now - standby.lastTurn > takeoverMilliseconds / 2, standby.heardFromPrimary != nil {
            standby.heardFromPrimary = now
        }
        standby.lastTurn = now
        if takeoverMilliseconds > 0, let heard = standby.heardFromPrimary, now - heard >= takeoverMilliseconds,
            machine.mayTakeOverNow
        {
            world.note("\(name) hears nothing from \(standby.primary.member) for \(now - heard) ms")
            end(.primarySilent)
            return
        }
        guard now - standby.lastHeard <= Self.timeoutMilliseconds else {
            openSession(&standby, now: now, world: world)
            return
        }
        guard standby.accepted else { return }
        let appended = UInt64(log.count)
        let moved = appended != standby.lastAck.appended || durable != standby.lastAck.durable
        guard moved || now - standby.lastAck.at >= Self.heartbeatMilliseconds else { return }
        standby.lastAck = (appended, durable, now)
        world.send(
            from: name,
            to: standby.primary.member,
            .ack(session: standby.session, appended: appended, durable: durable)
        )
    }

    // MARK: - Messages

    /// Takes one message at `storeNow` (milliseconds on the store's clock).
    func receive(_ message: SimulatedMessage, from sender: String, at storeNow: Int64, world: ClusterSimulation) {
        self.storeNow = storeNow
        let now = localTime(storeNow)
        switch (message, serving) {
        case (.ingest(let events), .primary(var primary)):
            ingest(events, from: sender, into: &primary, now: now, world: world)
            serving = .primary(primary)
        case (.ingest, _):
            world.send(from: name, to: sender, .notPrimary)
        case (.follow(let session, let theirTerm, let terms, let end, let theirDurable), .primary(var primary)):
            guard theirTerm <= primary.term else {
                world.send(from: name, to: sender, .refused(session: session, term: theirTerm))
                return
            }
            let continueAt = continuation(terms: terms, end: end)
            primary.sessions[sender] = Session(
                id: session,
                next: continueAt,
                appended: continueAt,
                durable: min(continueAt, theirDurable),
                lastHeard: now,
                lastSent: now
            )
            serving = .primary(primary)
            world.send(from: name, to: sender, .accepted(session: session, term: primary.term, continueAt: continueAt))
        case (.ack(let session, let appended, let theirDurable), .primary(var primary)):
            guard var open = primary.sessions[sender], open.id == session else { return }
            open.appended = max(open.appended, appended)
            open.durable = max(open.durable, theirDurable)
            open.lastHeard = now
            primary.sessions[sender] = open
            serving = .primary(primary)
        case (.accepted(let session, let term, let continueAt), .standby(var standby)):
            guard session == standby.session, !standby.accepted, term >= knownTerm else { return }
            knownTerm = term
            standby.accepted = true
            standby.lastHeard = now
            standby.heardFromPrimary = now
            standby.lastAck = (0, 0, 0)
            if continueAt < UInt64(log.count), bug != .skipCutBackOnRejoin {
                world.note("\(name) cuts its log back from \(log.count) to \(continueAt)")
                truncate(to: continueAt)
            }
            serving = .standby(standby)
        case (.refused(let session, let term), .standby(var standby)):
            guard session == standby.session else { return }
            knownTerm = max(knownTerm, term)
            standby.lastHeard = now
            serving = .standby(standby)
        case (.records(let session, let term, let start, let entries, _), .standby(var standby)):
            guard session == standby.session, standby.accepted else { return }
            guard term >= knownTerm else {
                openSession(&standby, now: now, world: world)
                serving = .standby(standby)
                return
            }
            standby.lastHeard = now
            standby.heardFromPrimary = now
            let end = UInt64(log.count)
            let overlap = Int(end) - Int(start)
            if start > end || overlap > entries.count
                || (bug != .skipCutBackOnRejoin && log[Int(start)..<Int(end)] != entries[0..<overlap])
            {
                // A gap (a message lost or overtaken) or a record that disagrees: the real log
                // refuses the append and the follower opens a new session.
                openSession(&standby, now: now, world: world)
            } else {
                for entry in entries[overlap...] { append(entry) }
            }
            serving = .standby(standby)
        default:
            break
        }
    }

    private func ingest(
        _ events: [UInt64],
        from gateway: String,
        into primary: inout Primary,
        now: Int64,
        world: ClusterSimulation
    ) {
        let leaseAlive = isLeaseAlive(primary)
        guard leaseAlive || bug == .acknowledgeAfterLeaseDeadline, !primary.stalled, primary.handOverDeadline == nil
        else {
            world.send(from: name, to: gateway, .unavailable)
            return
        }
        var last: UInt64 = 0
        for event in events {
            if let position = position(of: event) {
                last = max(last, position)
            } else {
                append(SimulatedEntry(term: primary.term, kind: .event(event, at: now)))
                last = UInt64(log.count)
            }
        }
        primary.waiting.append((gateway, events, last))
    }
}
