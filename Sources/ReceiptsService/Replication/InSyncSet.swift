/// The standbys a primary's acknowledgements wait for under `--replication-ack standby`
/// (deploy/REPLICATION.md, section 5.3, Kafka's ISR): every acknowledged record is durable on
/// every member, so any member holds everything acknowledged.
///
/// - **Joining.** A standby that has received everything acknowledged so far (`appended ≥ A`)
///   starts gating at `A₀ = A`: the frontier holds at `A₀` until the standby confirms it durable,
///   then it is a member and its durable position counts.
/// - **Leaving.** A member silent for the timeout while it lacks records the primary holds is
///   removed, except under `stall`, where the last one stays (acknowledgements wait for it).
/// - **None in sync.** Under `stall` the position holds, and once no member has been heard
///   for the timeout, new ingest is refused; under `local` the position is `UInt64.max` (the
///   primary's own durability rules) and the time is counted.
///
/// Recording the set in the coordination service before it counts (section 5.3) comes with the
/// coordinator. A pure value: the shipping thread updates it from the shipper's progress.
struct InSyncSet {
    /// What the set allows now.
    struct Verdict: Equatable {
        /// What the gate may let acknowledgements reach.
        var replicatedPosition: UInt64
        /// Whether new ingest must be refused (`stall`, no member heard for the timeout).
        var stalled: Bool
        /// Whether acknowledgements go out on the primary's durability alone (`local`, empty set).
        var unsynced: Bool
    }

    let fallback: ReplicationSettings.Fallback
    let timeoutMilliseconds: Int64
    /// The members, with the durable position each last confirmed.
    private(set) var members: [String: UInt64] = [:]
    /// Standbys gating on their way in, with the position `A₀` they must confirm.
    private(set) var joining: [String: UInt64] = [:]
    /// The last position allowed.
    private var replicated: UInt64
    /// When a member or joiner was last heard (monotonic milliseconds).
    private var lastHeard: Int64

    /// An empty set that allows `position` (what was acknowledged before it existed).
    init(position: UInt64, fallback: ReplicationSettings.Fallback, timeoutMilliseconds: Int64, now: Int64) {
        self.fallback = fallback
        self.timeoutMilliseconds = timeoutMilliseconds
        replicated = position
        lastHeard = now
    }

    /// Updates the set from the standbys' progress.
    ///
    /// - Parameters:
    ///   - standbys: Every standby with a session.
    ///   - acknowledged: The primary's frontier `A` now.
    ///   - primaryDurable: The primary's own durable position.
    mutating func update(
        standbys: [Shipper.Progress],
        acknowledged: UInt64,
        primaryDurable: UInt64,
        now: Int64
    ) -> Verdict {
        var progress: [String: Shipper.Progress] = [:]
        for standby in standbys { progress[standby.member] = standby }
        func isHeard(_ member: String) -> Bool {
            guard let standby = progress[member] else { return false }
            return now - standby.lastHeard <= timeoutMilliseconds
        }
        for standby in standbys
        where members[standby.member] == nil && joining[standby.member] == nil && isHeard(standby.member)
            && standby.appended >= acknowledged
        {
            joining[standby.member] = acknowledged
        }
        for (member, target) in joining {
            if let standby = progress[member], standby.durable >= target {
                joining[member] = nil
                members[member] = standby.durable
            } else if !isHeard(member) {
                joining[member] = nil
            }
        }
        for member in members.keys {
            if let standby = progress[member] { members[member] = max(members[member] ?? 0, standby.durable) }
            let lacking = (members[member] ?? 0) < primaryDurable
            if !isHeard(member), lacking, fallback == .local || members.count > 1 {
                members[member] = nil
            }
        }
        if members.keys.contains(where: isHeard) || joining.keys.contains(where: isHeard) {
            lastHeard = now
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
