import DequeModule
import ReceiptsWire

/// Which member of each ordinal the client talks to: the primary, as far as the client knows
/// (deploy/REPLICATION.md section 8.2).
///
/// An ordinal starts at its first member. A NOT_PRIMARY answer of the current member moves it
/// to the member named (as ``RoutingPolicy/decideNotPrimary(naming:from:recentSwitches:)``
/// decides, within ``ReceiptsClient/Configuration/maxPrimarySwitches`` per second), and a current
/// member that stays silent past a timeout is left for the next one in turn. Ingest, queries and
/// snapshot repairs share one tracker, so whichever of them learns of a new primary first moves
/// the others: the ingest scheduler re-sends its frames in flight when it sees the change.
/// An unreplicated ordinal has one member and never moves.
///
/// Owned by the client's loop thread, like the sockets it picks for.
final class PrimaryTracker {
    typealias Instant = ContinuousClock.Instant

    /// One ordinal's members and the one talked to.
    private struct Ordinal {
        let members: [Cluster.Worker]
        var current = 0
        /// When the ordinal switched on a NOT_PRIMARY answer within the last second, oldest first.
        var switches = Deque<Instant>()
    }

    private let cluster: Cluster
    private let policy: RoutingPolicy
    private let statistics: ClientStatistics
    /// The ordinals that answered NOT_PRIMARY or had a member left, by ordinal.
    private var ordinals: [Int: Ordinal] = [:]

    /// A tracker at every ordinal's first member.
    /// - Parameters:
    ///   - configuration: The cluster and the switch limit.
    ///   - statistics: Counts the switches.
    init(configuration: ReceiptsClient.Configuration, statistics: ClientStatistics) {
        cluster = configuration.cluster
        policy = RoutingPolicy(configuration)
        self.statistics = statistics
    }

    /// The member of an ordinal the client talks to now: an index into ``Cluster/members(of:)``.
    func current(of ordinal: Int) -> Int {
        ordinals[ordinal]?.current ?? 0
    }

    /// The standby of an ordinal a follower read goes to: the member after the current one
    /// (so with two members, the one that is not the primary as far as the client knows).
    /// - Returns: An index into ``Cluster/members(of:)``; nil for an ordinal of one member.
    func standby(of ordinal: Int) -> Int? {
        let state = self.state(of: ordinal)
        guard state.members.count > 1 else { return nil }
        return (state.current + 1) % state.members.count
    }

    /// Takes a NOT_PRIMARY answer.
    /// - Parameters:
    ///   - primary: The primary the answer names; nil while an election is under way.
    ///   - ordinal: The ordinal of the member that answered.
    ///   - member: The member that answered.
    ///   - now: The time, for the switch limit.
    /// - Returns: `.switchMember(to:)` the member to talk to now (the one named, or for an
    ///   answer of a member left already, the current one), or `.retry(afterMilliseconds:)` the
    ///   same member after a pause.
    func notPrimary(
        _ primary: ErrorReply.Primary?,
        ordinal: Int,
        member: Int,
        now: Instant
    ) -> RoutingPolicy.PrimaryDecision {
        var state = self.state(of: ordinal)
        guard member == state.current else { return .switchMember(to: state.current) }
        while let oldest = state.switches.first, oldest <= now - .seconds(1) { state.switches.removeFirst() }
        let named = primary.flatMap { primary in state.members.firstIndex { $0.isPrimary(primary) } }
        let decision = policy.decideNotPrimary(naming: named, from: member, recentSwitches: state.switches.count)
        if case .switchMember(let next) = decision {
            state.current = next
            state.switches.append(now)
            statistics.primarySwitches.add(1)
        }
        ordinals[ordinal] = state
        return decision
    }

    /// Leaves a member that did not answer in time for the next member of its ordinal: a
    /// primary that was killed, frozen or cut off, whose standby is (or becomes) the primary.
    /// - Parameters:
    ///   - member: The silent member.
    ///   - ordinal: Its ordinal.
    /// - Returns: true if the ordinal moved to another member; false if it has only one, or
    ///   the client left `member` already.
    func leave(_ member: Int, of ordinal: Int) -> Bool {
        var state = self.state(of: ordinal)
        guard state.members.count > 1, member == state.current else { return false }
        state.current = (member + 1) % state.members.count
        ordinals[ordinal] = state
        statistics.primarySwitches.add(1)
        return true
    }

    /// An ordinal's state, made at its first member on first use.
    private func state(of ordinal: Int) -> Ordinal {
        ordinals[ordinal] ?? Ordinal(members: cluster.members(of: ordinal))
    }
}
