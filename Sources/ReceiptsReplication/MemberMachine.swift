/// A replicated member's decisions (deploy/REPLICATION.md, sections 2 and 6), as a value with no
/// I/O: from the ordinal's keys and what the member knows of itself, what it does next, and
/// whether keys still agree with the role it is in. `ReplicatedMember` carries the actions out
/// (etcd calls, the standby and primary loops) and feeds their results back; every transition
/// is a table test (`MemberMachineTests`).
///
/// Its invariants are preconditions: a member's term never goes back, and it is primary at most
/// once in a term (a role taken against either is a bug, never a state).
package struct MemberMachine: Sendable {
    /// The role the member is in, as the keys are compared with it.
    package enum Role: Equatable, Sendable {
        /// Waiting for a primary to follow, or for eligibility.
        case waiting
        /// Following this primary.
        case standby(PrimaryRecord)
        /// Primary in `term`, with the primary key created at `guardRevision`.
        case primary(term: UInt64, guardRevision: Int64)
    }

    /// What the member does next.
    package enum Action: Equatable, Sendable {
        /// The keys name this member primary from an earlier run or term: give the key back and
        /// read the keys again.
        case resign(guardRevision: Int64)
        /// Follow this primary (a standby loop) until the keys name another.
        case follow(PrimaryRecord)
        /// Not eligible, or a hand-over's quiet period runs: wait (as `waiting`), then look again.
        case stayWaiting(milliseconds: Int64)
        /// Eligible, but holding no lease no campaign can win: wait for the coordinator's grant.
        case awaitLease(milliseconds: Int64)
        /// Campaign for the next term with these keys.
        case campaign(PrimaryRecord, InSyncRecord)
    }

    /// How long a member waits before it looks again while it holds no lease, or after a
    /// campaign whose outcome is unknown.
    package static let campaignRetryMilliseconds: Int64 = 100
    /// The longest wait before a waiting member reads the keys again.
    package static let waitingMilliseconds: Int64 = 1000

    /// This member, as its primary record would name it (the term is the campaign's).
    package let member: PrimaryRecord
    /// It may start an ordinal that never had a term (`--members`' first set).
    package let mayStartOrdinal: Bool
    /// The acknowledgement mode its in-sync record states.
    package let acknowledgement: ReplicationSettings.Acknowledgement
    /// The role it is in.
    private(set) var role = Role.waiting
    /// The highest term it served or followed, for the invariants.
    private(set) var highestTerm: UInt64 = 0
    /// The last term it was primary in (0: none yet).
    private(set) var lastPrimaryTerm: UInt64 = 0

    package init(member: PrimaryRecord, mayStartOrdinal: Bool, acknowledgement: ReplicationSettings.Acknowledgement) {
        self.member = member
        self.mayStartOrdinal = mayStartOrdinal
        self.acknowledgement = acknowledgement
    }

    /// What to do with the ordinal's keys.
    ///
    /// - Parameters:
    ///   - state: The ordinal's keys.
    ///   - ownLastTerm: The last entry of this member's `terms` file (nil if it has none).
    ///   - holdsLease: The coordinator holds a lease.
    ///   - quietMilliseconds: What remains of a hand-over's quiet period (nil: none).
    package func next(
        state: OrdinalState,
        ownLastTerm: TermHistory.Entry?,
        holdsLease: Bool,
        quietMilliseconds: Int64?
    ) -> Action {
        if let primary = state.primary {
            return primary.member == member.member
                ? .resign(guardRevision: state.primaryRevision) : .follow(primary)
        }
        guard isEligible(state, ownLastTerm: ownLastTerm), quietMilliseconds == nil else {
            return .stayWaiting(
                milliseconds: min(quietMilliseconds ?? Self.waitingMilliseconds, Self.waitingMilliseconds)
            )
        }
        guard holdsLease else { return .awaitLease(milliseconds: Self.campaignRetryMilliseconds) }
        let term = max(state.term, ownLastTerm?.term ?? 0) + 1
        var record = member
        record.term = term
        let inSync = InSyncRecord(
            term: term,
            standbys: (state.inSync?.standbys ?? []).filter { $0 != member.member },
            ack: acknowledgement.rawValue
        )
        return .campaign(record, inSync)
    }

    /// Section 6.1: in the recorded in-sync set of the latest term, or the writer of the latest
    /// term, or a member of the first member set for an ordinal's first term.
    package func isEligible(_ state: OrdinalState, ownLastTerm: TermHistory.Entry?) -> Bool {
        if let inSync = state.inSync, inSync.term == state.term, inSync.standbys.contains(member.member) {
            return true
        }
        if state.term > 0, let last = ownLastTerm, last.term == state.term, last.member == member.member {
            return true
        }
        return state.term == 0 && mayStartOrdinal
    }

    /// Whether the keys agree with the role the member is in; when they do not, the running
    /// loop is asked to end.
    package func matches(_ state: OrdinalState) -> Bool {
        switch role {
        case .waiting:
            state.primary == nil
        case .standby(let primary):
            state.primary == primary
        case .primary(_, let guardRevision):
            state.primary?.member == member.member && state.primaryRevision == guardRevision
        }
    }

    /// Takes a new role.
    package mutating func take(_ new: Role) {
        let term: UInt64
        switch new {
        case .waiting: term = highestTerm
        case .standby(let primary): term = primary.term
        case .primary(let won, _): term = won
        }
        precondition(term >= highestTerm, "member \(member.member): term \(term) after term \(highestTerm)")
        if case .primary(let won, _) = new {
            precondition(won > lastPrimaryTerm, "member \(member.member): primary twice in term \(won)")
            lastPrimaryTerm = won
        }
        highestTerm = term
        role = new
    }
}
