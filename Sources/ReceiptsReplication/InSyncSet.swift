/// The standbys a primary's acknowledgements wait for (deploy/REPLICATION.md, section 5.3, Kafka's
/// ISR): every acknowledged record is durable on every member, so any member holds everything
/// acknowledged.
///
/// - **Joining.** A standby that has received everything acknowledged so far (`appended ≥ A₀`,
///   where `A₀` is `A` or, if larger, everything the primary recovered at its term's start, which
///   earlier terms may have acknowledged) starts gating at `A₀`: the frontier holds at `A₀` until
///   the standby confirms it durable,
///   then it is a member and its durable position counts. Only then is it proposed for the
///   recorded set (which makes it eligible for promotion): gating before recording.
/// - **Leaving.** A member silent for the timeout while it lacks records the primary holds
///   leaves, except under `stall`, where the last one stays (acknowledgements wait for it). It
///   goes on gating until a recorded set without it is confirmed: recording before ungating.
/// - **None in sync.** Under `stall` the position holds, and once no member has been heard for
///   the timeout, new ingest is refused; under `local` the position is `UInt64.max` (the
///   primary's own durability rules) and the time is counted.
///
/// Under `--replication-ack local` nothing gates: the set is kept for promotion only. A pure
/// value: the shipping thread updates it from the shipper's progress.
package struct InSyncSet {
    /// What the set allows now.
    package struct Verdict: Equatable {
        /// What the gate may let acknowledgements reach.
        package var replicatedPosition: UInt64
        /// Whether new ingest must be refused (`stall`, no member heard for the timeout).
        package var stalled: Bool
        /// Whether acknowledgements go out on the primary's durability alone.
        package var unsynced: Bool
    }

    package let acknowledgement: ReplicationSettings.Acknowledgement
    package let fallback: ReplicationSettings.Fallback
    package let timeoutMilliseconds: Int64
    /// The members, with the durable position each last confirmed; they gate under `standby`.
    package private(set) var members: [String: UInt64] = [:]
    /// Standbys gating on their way in, with the position `A₀` they must confirm.
    package private(set) var joining: [String: UInt64] = [:]
    /// The session each member's durable position was last taken from.
    private var sessions: [String: UInt64] = [:]
    /// The set as last recorded in the coordination service; nil when nothing records it (then
    /// every change counts at once).
    package private(set) var recorded: Set<String>?
    /// The last position allowed.
    private var replicated: UInt64
    /// The position the set started from: everything the primary recovered, which may have been
    /// acknowledged in an earlier term. A joiner must hold it even while the acknowledged
    /// position is held back to 0 by recorded standbys that have not confirmed yet.
    private let recovered: UInt64
    /// When a member or joiner was last heard (monotonic milliseconds).
    private var lastHeard: Int64

    /// A set that allows `position` (what was acknowledged before it existed).
    ///
    /// - Parameter recorded: The set recorded in the coordination service when this primary's
    ///   term began (its members gate until they catch up or leave); nil when nothing records it.
    package init(
        position: UInt64,
        acknowledgement: ReplicationSettings.Acknowledgement,
        fallback: ReplicationSettings.Fallback,
        timeoutMilliseconds: Int64,
        recorded: Set<String>? = nil,
        now: Int64
    ) {
        self.acknowledgement = acknowledgement
        self.fallback = fallback
        self.timeoutMilliseconds = timeoutMilliseconds
        self.recorded = recorded
        for member in recorded ?? [] { members[member] = 0 }
        replicated = position
        recovered = position
        lastHeard = now
    }

    /// The set that should be recorded: the members not on their way out.
    package private(set) var wanted: Set<String> = []

    /// Takes a set the coordination service confirmed it recorded.
    package mutating func confirmRecorded(_ set: Set<String>) {
        recorded = set
    }

    /// Updates the set from the standbys' progress.
    ///
    /// - Parameters:
    ///   - standbys: Every standby with a session.
    ///   - acknowledged: The primary's frontier `A` now.
    ///   - primaryDurable: The primary's own durable position.
    package mutating func update(
        standbys: [StandbyProgress],
        acknowledged: UInt64,
        primaryDurable: UInt64,
        now: Int64
    ) -> Verdict {
        var progress: [String: StandbyProgress] = [:]
        for standby in standbys { progress[standby.member] = standby }
        func isHeard(_ member: String) -> Bool {
            guard let standby = progress[member] else { return false }
            return now - standby.lastHeard <= timeoutMilliseconds
        }
        let joinAt = max(acknowledged, recovered)
        for standby in standbys
        where members[standby.member] == nil && joining[standby.member] == nil && isHeard(standby.member)
            && standby.appended >= joinAt
        {
            joining[standby.member] = joinAt
        }
        for (member, target) in joining {
            if let standby = progress[member], standby.durable >= target {
                joining[member] = nil
                members[member] = standby.durable
                sessions[member] = standby.session
            } else if !isHeard(member) {
                joining[member] = nil
            }
        }
        var leaving: Set<String> = []
        // In name order, so that which of two silent members leaves under `stall` does not
        // depend on the dictionary's hashing (and one seed of the simulation gives one run).
        for member in members.keys.sorted() {
            if let standby = progress[member] {
                // Within a session a standby's durable position only grows; a new session's is
                // what the standby holds now (it may have cut its log back), taken as given.
                let sameSession = sessions[member] == standby.session
                members[member] = sameSession ? max(members[member] ?? 0, standby.durable) : standby.durable
                sessions[member] = standby.session
            }
            let lacking = (members[member] ?? 0) < primaryDurable
            if !isHeard(member), lacking, fallback == .local || members.count - leaving.count > 1 {
                leaving.insert(member)
            }
        }
        wanted = Set(members.keys).subtracting(leaving)
        // A leaver stops gating once a recorded set without it is confirmed.
        for member in leaving where !(recorded?.contains(member) ?? false) {
            members[member] = nil
        }
        if members.keys.contains(where: isHeard) || joining.keys.contains(where: isHeard) {
            lastHeard = now
        }
        guard acknowledgement == .standby else {
            return Verdict(replicatedPosition: .max, stalled: false, unsynced: false)
        }
        guard !members.isEmpty || !joining.isEmpty else {
            if fallback == .local {
                replicated = .max
                return Verdict(replicatedPosition: .max, stalled: false, unsynced: true)
            }
            return Verdict(
                replicatedPosition: replicated,
                stalled: now - lastHeard > timeoutMilliseconds,
                unsynced: false
            )
        }
        let position = min(members.values.min() ?? .max, joining.values.min() ?? .max)
        replicated = position
        let stalled = fallback == .stall && now - lastHeard > timeoutMilliseconds
        return Verdict(replicatedPosition: position, stalled: stalled, unsynced: false)
    }
}
