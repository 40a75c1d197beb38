import ReceiptsCore
import ReceiptsTestKit

@testable import ReceiptsReplication

/// A deterministic simulation of one replicated ordinal: 2 or 3 `SimulatedMember`s, a real
/// `InMemoryCoordinator.Store` on virtual time, a network that drops, delays, reorders and
/// duplicates, gateways that re-send unacknowledged events with the same ids and follow
/// `NOT_PRIMARY`, and faults chosen by one seed: crashes (of the process, or of the machine,
/// which loses unsynced writes), pauses longer than a lease, partitions from the other members
/// and from the coordinator, and the coordinator unavailable for a while. Standbys take over from
/// a primary silent for `--replication-takeover-ms`, as `StandbyLoop` does.
///
/// After every acknowledgement it checks that one member acknowledges in a term, and that after a
/// later term began an earlier term's member acknowledges nothing, or, for a term a standby took
/// over, only what the later terms' primaries held when they won; at the end, after the faults
/// heal, that every acknowledged event is in the final primary's log exactly once, that every
/// standby of the recorded in-sync set holds a prefix of that log with every acknowledged event,
/// and that the final primary's engine, and every in-sync standby's that holds the whole log,
/// equals one unreplicated engine fed the acknowledged events. No member's engine may take an
/// event of its log for a duplicate.
final class ClusterSimulation {
    /// One gateway: its events not yet acknowledged (with when each was last sent) and the
    /// member it takes for the primary.
    struct Gateway {
        var name: String
        var unacknowledged: [UInt64: Int64?] = [:]
        var acknowledged: Set<UInt64> = []
        var primary: String?
        var lastSent: Int64 = -1_000
    }

    /// What a member suffers now.
    enum Condition: Equatable {
        case up
        case paused(until: Int64)
        case down(until: Int64)
    }

    static let tickMilliseconds: Int64 = 10
    static let faultMilliseconds: Int64 = 20_000
    static let healMilliseconds: Int64 = 30_000
    /// How fast a member's clock may run against the coordinator's: the lease margin of
    /// `max(0.5 s, TTL/6)` covers a clock up to a sixth slow (the member would count its lease
    /// alive for longer than the coordinator keeps it), so a little less than that either way.
    static let clockRates = 0.85...1.15

    let seed: UInt64
    let bug: PlantedBug?
    let workload: SimulatedWorkload
    private var random: SplitMix64
    private let store = InMemoryCoordinator.Store(now: 1_000_000_000)
    /// Reads the keys for the gateways and the checks; never started, so it holds no lease.
    private let observer: InMemoryCoordinator
    private(set) var members: [SimulatedMember] = []
    private var conditions: [String: Condition] = [:]
    private var gateways: [Gateway] = []
    private var inFlight: [Envelope] = []
    private var sequence: UInt64 = 0
    private var nextEvent: UInt64 = 1
    /// Members cut off from the other members, and from the coordinator, until a time.
    private var isolated: [String: Int64] = [:]
    private var cutFromCoordinator: [String: Int64] = [:]
    private var coordinatorDownUntil: Int64 = 0
    /// `--replication-takeover-ms`, chosen per seed: its default, or 0 (failover on the lease
    /// only).
    private let takeoverMilliseconds: Int64
    /// The network's faults, chosen per seed.
    private let dropChance: Double
    private let duplicateChance: Double
    private let maximumDelay: Int64
    /// Who acknowledged in each term, and when each term was won with which events in its
    /// primary's log.
    private var ackers: [UInt64: String] = [:]
    private var wins: [UInt64: (at: Int64, held: Set<UInt64>)] = [:]
    /// Who first acknowledged each event, in which term and when, for a failure's report.
    private var firstAcknowledgement: [UInt64: String] = [:]
    private(set) var failure: SimulationFailure?
    /// The simulation's events, for a failure's report and the replay.
    private(set) var trace: [String] = []
    private let keepsWholeTrace: Bool
    /// Counts for the report.
    private(set) var acknowledgedEvents = 0
    private(set) var faults = 0
    private(set) var takeovers = 0
    /// The terms a standby took over from their silent primary.
    private var takenOver: Set<UInt64> = []

    /// The keys as last read, and the store's revision then: they are read again only after a
    /// write (decoding them is most of a turn's cost).
    private var keysRead: (revision: Int64, state: OrdinalState)?

    /// The ordinal's keys now, as a member or gateway reads them; nil while the coordinator is
    /// unavailable.
    func keys() async -> OrdinalState? {
        guard store.isAvailable else { return nil }
        let revision = store.revision
        if let keysRead, keysRead.revision == revision { return keysRead.state }
        guard let state = try? await observer.state() else { return nil }
        keysRead = (revision, state)
        return state
    }

    /// Now, in milliseconds on the store's clock.
    var now: Int64 { Int64(store.now / 1_000_000) }

    init(seed: UInt64, bug: PlantedBug? = nil, keepsWholeTrace: Bool = false) {
        self.seed = seed
        self.bug = bug
        self.keepsWholeTrace = keepsWholeTrace
        workload = SimulatedWorkload(seed: seed)
        random = SplitMix64(seed: seed)
        observer = InMemoryCoordinator(store: store, ordinal: 0, member: "observer")
        let count = Int.random(in: 2...3, using: &random)
        dropChance = Double.random(in: 0...0.05, using: &random)
        duplicateChance = Double.random(in: 0...0.03, using: &random)
        maximumDelay = Int64.random(in: 2...40, using: &random)
        let takeover = ReplicationSettings(member: "", role: .elected, endpoint: "").takeoverMilliseconds
        takeoverMilliseconds = Int.random(in: 0..<3, using: &random) == 0 ? 0 : takeover
        for index in 0..<count {
            let name = "m\(index)"
            // Within the margin the lease deadline keeps (deploy/REPLICATION.md, section 7.3).
            let rate = Double.random(in: Self.clockRates, using: &random)
            members.append(
                SimulatedMember(
                    name: name,
                    index: index,
                    clockRate: rate,
                    takeoverMilliseconds: takeoverMilliseconds,
                    bug: bug,
                    workload: workload,
                    store: store
                )
            )
            conditions[name] = .up
        }
        gateways = (0..<Int.random(in: 1...2, using: &random)).map { Gateway(name: "g\($0)") }
    }

    /// Runs the faults, then the healing, and checks the end. Returns the failure found, if any.
    func run() async -> SimulationFailure? {
        let rates = members.map { "\($0.name) \(($0.clockRate * 1000).rounded() / 1000)" }.joined(separator: ", ")
        note(
            "\(members.count) members (clock rates \(rates)), \(gateways.count) gateways, drop \(dropChance), "
                + "delay ≤ \(maximumDelay) ms, takeover after \(takeoverMilliseconds) ms"
        )
        let faultsEnd = now + Self.faultMilliseconds
        while now < faultsEnd, failure == nil {
            injectFault()
            produceEvents()
            await tick()
        }
        heal()
        let healEnd = now + Self.healMilliseconds
        while now < healEnd, failure == nil, await !isSettled() {
            await tick()
        }
        if failure == nil { await checkEnd() }
        return failure
    }

    // MARK: - Time

    private func tick() async {
        store.advance(by: UInt64(Self.tickMilliseconds) * 1_000_000)
        let now = self.now
        store.isAvailable = now >= coordinatorDownUntil
        for (name, condition) in conditions.sorted(by: { $0.key < $1.key }) {
            switch condition {
            case .paused(let until) where until <= now:
                conditions[name] = .up
                updateRenewals(of: name)
                note("\(name) resumes")
            case .down(let until) where until <= now:
                conditions[name] = .up
                member(name)?.restart(store: store)
                note("\(name) restarts with \(member(name)?.log.count ?? 0) records")
            default:
                break
            }
        }
        for (name, until) in cutFromCoordinator.sorted(by: { $0.key < $1.key }) where until <= now {
            cutFromCoordinator[name] = nil
            updateRenewals(of: name)
        }
        for (name, until) in isolated where until <= now { isolated[name] = nil }
        deliver()
        for member in members where conditions[member.name] == .up {
            if Bool.random(using: &random) { member.sync() }
            await member.turn(at: now, reachesCoordinator: cutFromCoordinator[member.name] == nil, world: self)
            member.applyLog(world: self)
            if failure != nil { return }
        }
        await sendFromGateways()
    }

    /// Whether every event was acknowledged and every member that runs follows or leads.
    private func isSettled() async -> Bool {
        guard gateways.allSatisfy({ $0.unacknowledged.isEmpty }), let primary = await finalPrimary() else {
            return false
        }
        return members.allSatisfy { member in
            member === primary || member.log == primary.log
        }
    }

    // MARK: - Network

    /// Sends `message`; the network may drop, delay or duplicate it.
    func send(from: String, to: String, _ message: SimulatedMessage) {
        guard isolated[from] == nil, isolated[to] == nil else { return }
        guard !Double.random(in: 0..<1, using: &random).isLess(than: dropChance) else { return }
        let copies = Double.random(in: 0..<1, using: &random) < duplicateChance ? 2 : 1
        for _ in 0..<copies {
            sequence += 1
            let delay = Int64.random(in: 1...maximumDelay, using: &random)
            inFlight.append(Envelope(from: from, to: to, deliverAt: now + delay, sequence: sequence, message: message))
        }
    }

    /// Hands out what is due: to a member that runs, to a gateway; a paused member's messages wait,
    /// a stopped one's are lost.
    private func deliver() {
        let now = self.now
        var due: [Envelope] = []
        var later: [Envelope] = []
        for envelope in inFlight {
            if envelope.deliverAt > now {
                later.append(envelope)
            } else if case .paused = conditions[envelope.to] {
                later.append(envelope)
            } else {
                due.append(envelope)
            }
        }
        inFlight = later
        due.sort { ($0.deliverAt, $0.sequence) < ($1.deliverAt, $1.sequence) }
        for envelope in due {
            if let index = gateways.firstIndex(where: { $0.name == envelope.to }) {
                receive(envelope.message, gateway: index)
            } else if let member = member(envelope.to), conditions[envelope.to] == .up {
                member.receive(envelope.message, from: envelope.from, at: now, world: self)
            }
            if failure != nil { return }
        }
    }

    // MARK: - Gateways

    private func produceEvents() {
        for index in gateways.indices where Double.random(in: 0..<1, using: &random) < 0.15 {
            gateways[index].unacknowledged[nextEvent] = .some(nil)
            nextEvent += 1
        }
    }

    /// Each gateway sends its unacknowledged events (new ones at once, the others again after
    /// 200 ms) to the member it takes for the primary, reading the keys when it has none.
    private func sendFromGateways() async {
        for index in gateways.indices {
            var gateway = gateways[index]
            defer { gateways[index] = gateway }
            if gateway.primary == nil {
                gateway.primary = await keys()?.primary?.member
            }
            guard let primary = gateway.primary else { continue }
            let due = gateway.unacknowledged.filter { _, sent in sent.map { now - $0 >= 200 } ?? true }
                .keys.sorted().prefix(8)
            guard !due.isEmpty else { continue }
            for event in due { gateway.unacknowledged[event] = now }
            send(from: gateway.name, to: primary, .ingest(events: Array(due)))
        }
    }

    private func receive(_ message: SimulatedMessage, gateway index: Int) {
        switch message {
        case .acknowledged(let events):
            for event in events where gateways[index].unacknowledged.removeValue(forKey: event) != nil {
                gateways[index].acknowledged.insert(event)
            }
        case .notPrimary:
            gateways[index].primary = nil
        default:
            break  // `unavailable`: the events are sent again after 200 ms
        }
    }

    // MARK: - Faults

    private func injectFault() {
        guard Double.random(in: 0..<1, using: &random) < 0.01 else { return }
        faults += 1
        let now = self.now
        let target = members[Int.random(in: 0..<members.count, using: &random)]
        let name = target.name
        guard conditions[name] == .up else { return }
        switch Int.random(in: 0..<7, using: &random) {
        case 0, 1:
            let losing = Bool.random(using: &random)
            target.crash(losingUnsynced: losing)
            let until = now + Int64.random(in: 100...5_000, using: &random)
            conditions[name] = .down(until: until)
            note("\(name) crashes\(losing ? " with its machine (unsynced writes lost)" : "") until \(until)")
        case 2:
            let until = now + Int64.random(in: 500...6_000, using: &random)
            conditions[name] = .paused(until: until)
            updateRenewals(of: name)
            note("\(name) pauses until \(until)")
        case 3:
            let until = now + Int64.random(in: 200...5_000, using: &random)
            isolated[name] = until
            note("\(name) is cut off from the other members until \(until)")
        case 4:
            let until = now + Int64.random(in: 200...5_000, using: &random)
            cutFromCoordinator[name] = until
            updateRenewals(of: name)
            note("\(name) is cut off from the coordinator until \(until)")
        case 5:
            if target.demote(at: now) { note("\(name) is asked to hand over") }
        default:
            coordinatorDownUntil = now + Int64.random(in: 200...4_000, using: &random)
            note("the coordinator is unavailable until \(coordinatorDownUntil)")
        }
    }

    /// A member's lease is renewed while it runs and reaches the coordinator (a dead process's
    /// coordinator is abandoned and renews nothing).
    private func updateRenewals(of name: String) {
        if conditions[name] == .up, cutFromCoordinator[name] == nil {
            store.resumeRenewals(of: name)
        } else {
            store.stopRenewals(of: name)
        }
    }

    /// Ends every fault: members start or resume, partitions heal, the coordinator returns.
    private func heal() {
        let now = self.now
        for (name, condition) in conditions.sorted(by: { $0.key < $1.key }) where condition != .up {
            switch condition {
            case .paused: conditions[name] = .paused(until: now)
            case .down: conditions[name] = .down(until: now)
            case .up: break
            }
        }
        for name in cutFromCoordinator.keys.sorted() { cutFromCoordinator[name] = now }
        isolated.removeAll()
        coordinatorDownUntil = 0
        note("every fault heals")
    }

    // MARK: - What members report

    func note(_ line: String) {
        trace.append("\(now) \(line)")
        if !keepsWholeTrace, trace.count > 200 { trace.removeFirst(100) }
    }

    /// A member won the campaign for `term`, with `held` in its log.
    func won(term: UInt64, by member: String, holding held: Set<UInt64>) {
        wins[term] = (now, held)
        note("\(member) wins term \(term)")
    }

    /// A standby deposed its silent primary, whose term was `term`.
    func tookOver(term: UInt64, by member: String) {
        takeovers += 1
        takenOver.insert(term)
        note("\(member) takes term \(term) over from its silent primary")
    }

    /// Records the in-sync set through `coordinator`, guarded by the primary key's revision.
    func record(_ inSync: InSyncRecord, by coordinator: InMemoryCoordinator, guardRevision: Int64) async -> Bool {
        let recorded = (try? await coordinator.recordInSync(inSync, guardRevision: guardRevision)) ?? false
        if recorded { note("term \(inSync.term) records in-sync \(inSync.standbys)") }
        return recorded
    }

    /// A member acknowledges `events` in `term`: one member a term, and none once a later term
    /// began, unless `term` was taken over: then only events the later terms' primaries held
    /// when they won. (A primary that was taken over from keeps its lease: resumed from a pause,
    /// it may still complete a frame its standby confirmed before taking over,
    /// deploy/REPLICATION.md section 7.4; that event is in the next term's history.)
    func acknowledge(_ events: [UInt64], member: String, term: UInt64) {
        acknowledgedEvents += events.count
        if let acker = ackers[term], acker != member {
            fail("\(member) acknowledged in term \(term), which \(acker) acknowledged in")
        }
        ackers[term] = member
        for event in events where firstAcknowledgement[event] == nil {
            firstAcknowledgement[event] = "by \(member) in term \(term) at \(now)"
        }
        for (later, win) in wins.sorted(by: { $0.key < $1.key }) where later > term && win.at <= now {
            if !takenOver.contains(term) {
                fail("\(member) acknowledged \(events) in term \(term) after term \(later) began at \(win.at)")
            } else if let missing = events.first(where: { !win.held.contains($0) }) {
                fail(
                    "\(member) acknowledged e\(missing) in term \(term) after term \(later) began at \(win.at) "
                        + "without it"
                )
            }
        }
    }

    /// A member's engine took `event` of its log for one it had applied already.
    func appliedTwice(_ event: UInt64, by member: String) {
        fail("\(member)'s engine applied e\(event) twice")
    }

    private func fail(_ invariant: String) {
        guard failure == nil else { return }
        failure = SimulationFailure(seed: seed, time: now, invariant: invariant, trace: trace)
    }

    // MARK: - The end

    private func member(_ name: String) -> SimulatedMember? {
        members.first { $0.name == name }
    }

    /// The member the keys name primary, if it serves as one.
    private func finalPrimary() async -> SimulatedMember? {
        guard let name = await keys()?.primary?.member, let member = member(name),
            conditions[name] == .up, case .primary = member.serving
        else {
            return nil
        }
        return member
    }

    private func checkEnd() async {
        guard let primary = await finalPrimary() else {
            return fail("no primary serves \(Self.healMilliseconds) ms after the faults healed")
        }
        let acknowledged = gateways.reduce(into: Set<UInt64>()) { $0.formUnion($1.acknowledged) }
        if let waiting = gateways.first(where: { !$0.unacknowledged.isEmpty }) {
            return fail("\(waiting.name) still waits for \(waiting.unacknowledged.keys.sorted().prefix(10))")
        }
        var seen: [UInt64: Int] = [:]
        for event in primary.log.compactMap(\.event) { seen[event, default: 0] += 1 }
        if let twice = seen.first(where: { $0.value > 1 }) {
            return fail("event \(twice.key) is in \(primary.name)'s log \(twice.value) times")
        }
        if let lost = acknowledged.sorted().first(where: { seen[$0] == nil }) {
            return fail(
                "acknowledged event \(lost) (\(firstAcknowledgement[lost] ?? "?")) is not in the final primary "
                    + "\(primary.name)'s log"
            )
        }
        let inSync = await keys()?.inSync?.standbys ?? []
        for name in inSync {
            guard let standby = member(name) else { continue }
            if !primary.log.starts(with: standby.log) {
                let at =
                    zip(standby.log, primary.log).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(standby.log.count, primary.log.count)
                return fail(
                    "in-sync standby \(name)'s log is not a prefix of \(primary.name)'s: at \(at), "
                        + "\(standby.log[at...].prefix(4)) against \(primary.log[at...].prefix(4))"
                )
            }
            let held = Set(standby.log.prefix(Int(standby.durable)).compactMap(\.event))
            if let missing = acknowledged.sorted().first(where: { !held.contains($0) }) {
                return fail("in-sync standby \(name) does not hold acknowledged event \(missing) durably")
            }
        }
        checkEngines(primary: primary, inSync: inSync, acknowledged: acknowledged)
    }

    /// The final primary's engine, and each in-sync standby's that holds the whole log, equals
    /// one unreplicated engine fed the acknowledged events in the primary's log's order.
    private func checkEngines(primary: SimulatedMember, inSync: [String], acknowledged: Set<UInt64>) {
        var reference = ReceiptEngine()
        for entry in primary.log {
            guard case .event(let id, let at) = entry.kind, acknowledged.contains(id) else { continue }
            _ = reference.replay(workload.event(id), at: Timestamp(milliseconds: at))
        }
        let expected = reference.encodedState()
        let holders = [primary] + inSync.compactMap(member).filter { $0.log == primary.log }
        for holder in holders {
            holder.applyLog(world: self)
            guard holder.engine.encodedState() != expected else { continue }
            let difference = Self.firstDifference(holder.engine, reference) ?? "in the snapshot bytes only"
            return fail(
                "\(holder.name)'s engine differs from one fed the acknowledged events: \(difference)"
            )
        }
    }

    /// The first message status, unread count or thread state in which `engine` differs from
    /// `reference`.
    private static func firstDifference(_ engine: ReceiptEngine, _ reference: ReceiptEngine) -> String? {
        let conversations = SimulatedWorkload.conversations.map(\.id)
        for user in SimulatedWorkload.users {
            let (found, expected) = (
                engine.unreadCounts(user: user, conversations: conversations),
                reference.unreadCounts(user: user, conversations: conversations)
            )
            if found != expected { return "\(user)'s unread counts \(found), expected \(expected)" }
            let (threads, expectedThreads) = (
                engine.threadReadStates(user: user, conversations: conversations),
                reference.threadReadStates(user: user, conversations: conversations)
            )
            if threads != expectedThreads { return "\(user)'s threads \(threads), expected \(expectedThreads)" }
        }
        for conversation in conversations {
            let (found, expected) = (
                engine.snapshot(conversation: conversation, limit: 1_000),
                reference.snapshot(conversation: conversation, limit: 1_000)
            )
            if found != expected {
                return
                    "\(conversation)'s statuses \(String(describing: found)), expected \(String(describing: expected))"
            }
        }
        return nil
    }
}
