/// A replicated member's decisions (deploy/REPLICATION.md, sections 2 and 6) as a state machine
/// with no I/O, in the shape of etcd raft's `Step`: the member feeds it what happened (an
/// ``Input``: keys read, a campaign's outcome, a role's end) with what it knows of itself at that
/// moment (``Facts``), and the machine answers with the one thing to do next (an ``Effect``).
/// `ReplicatedMember` carries effects out on the worker and the cluster simulation does the same
/// on virtual time, so both run the same decisions; every transition is a table test
/// (`MemberMachineTests`).
///
/// It owns the member's role and term. Its invariants are preconditions: a member's term never
/// goes back, and it is primary at most once in a term (a role taken against either is a bug,
/// never a state).
package struct MemberMachine: Sendable {
    /// The role the member is in, as the keys are compared with it.
    package enum Role: Equatable, Sendable {
        /// Waiting for a primary to follow, or for eligibility.
        case waiting
        /// Campaigning for `term`.
        case candidate(term: UInt64)
        /// Following this primary.
        case standby(PrimaryRecord)
        /// Primary in `term`, with the primary key created at `guardRevision`.
        case primary(term: UInt64, guardRevision: Int64)
    }

    /// What happened: the outcome of the last ``Effect`` carried out.
    package enum Input: Equatable, Sendable {
        /// The member starts.
        case started
        /// The ordinal's keys, as read.
        case keys(OrdinalState)
        /// The keys could not be read.
        case keysUnreadable
        /// A takeover ended, whatever its outcome (the keys say what it did).
        case tookOver
        /// A wait ended (its time passed, or something woke the member).
        case waited
        /// A resignation ended, whatever its outcome: a key not given back goes with its lease.
        case resigned
        /// The campaign ended: won, lost (with the keys it lost to), or unknown (nil).
        case campaignEnded(CampaignOutcome?)
        /// The role's loop ended.
        case roleEnded(RoleEnding)
    }

    /// Why a role's loop ended.
    package enum RoleEnding: Equatable, Sendable {
        /// A primary handed the ordinal over to a standby (`demote`, or a stop).
        case handedOver
        /// The member is stopping.
        case stopped
        /// The keys no longer matched the role (a primary deposed or superseded, a standby's
        /// primary gone).
        case left
        /// A standby heard nothing from its primary for `--replication-takeover-ms` while the
        /// keys made it one that may take over (``mayTakeOver(from:_:)``).
        case primarySilent
    }

    /// What the member knows of itself when it feeds an input.
    package struct Facts: Equatable, Sendable {
        /// The last entry of the member's `terms` file (nil if it has none).
        package var ownLastTerm: TermHistory.Entry?
        /// The coordinator's lease (0: none held).
        package var lease: Int64
        /// A stop was asked for.
        package var stopping: Bool
        /// Monotonic milliseconds on the member's clock.
        package var now: Int64

        package init(ownLastTerm: TermHistory.Entry?, lease: Int64, stopping: Bool, now: Int64) {
            self.ownLastTerm = ownLastTerm
            self.lease = lease
            self.stopping = stopping
            self.now = now
        }
    }

    /// What the member does next.
    package enum Effect: Equatable, Sendable {
        /// Read the ordinal's keys.
        case readKeys
        /// The keys name this member primary from an earlier run or term, or a stop comes
        /// between a won campaign and its term: give the key back.
        case resign(guardRevision: Int64)
        /// Follow this primary (a standby loop) until the keys name another, or a stop.
        case follow(PrimaryRecord)
        /// Depose a primary that went silent (section 6.5): hand its term over to this member
        /// on its behalf (the `handover` key naming this member, the primary key deleted), while
        /// the keys are as read (`Coordinator.takeOver`). This member then campaigns at once,
        /// and the others wait the quiet period.
        case takeOver(HandOverRecord, over: OrdinalState)
        /// Wait, then feed ``Input/waited``: not eligible, a hand-over's quiet period, no lease,
        /// or a read or campaign to try again.
        case wait(milliseconds: Int64)
        /// Campaign for the next term with these keys, over the keys seen.
        case campaign(PrimaryRecord, InSyncRecord, over: OrdinalState)
        /// Serve as primary (a service loop that starts the term in the log) until deposed,
        /// handed over or stopped. `lease` is the lease the primary key was attached to (read
        /// before the campaign, so a lease granted meanwhile bounds nothing), and `recorded` the
        /// standbys the campaign recorded in sync.
        case serve(term: UInt64, guardRevision: Int64, lease: Int64, recorded: Set<String>)
        /// Stop taking roles.
        case exit
    }

    /// How long a primary's silence stays a reason to take over while the keys cannot be read:
    /// keys read later say nothing of the primary now (it may have served again since).
    package static let silenceValidityMilliseconds: Int64 = 1000
    /// How long a member waits before it looks again while it holds no lease, or after a
    /// campaign whose outcome is unknown.
    package static let campaignRetryMilliseconds: Int64 = 100
    /// The longest wait before a waiting member reads the keys again.
    package static let waitingMilliseconds: Int64 = 1000
    /// The wait before keys that could not be read are read again.
    package static let unreadableKeysMilliseconds: Int64 = 500

    /// This member, as its primary record would name it (the term is the campaign's).
    package let member: PrimaryRecord
    /// It may start an ordinal that never had a term (`--members`' first set).
    package let mayStartOrdinal: Bool
    /// The acknowledgement mode its in-sync record states.
    package let acknowledgement: ReplicationSettings.Acknowledgement
    /// The role it is in.
    package private(set) var role = Role.waiting
    /// The keys last read or watched (nil: to be read before the next decision).
    package private(set) var keys: OrdinalState?
    /// The highest term it served or followed, for the invariants.
    private(set) var highestTerm: UInt64 = 0
    /// The last term it was primary in (0: none yet).
    private(set) var lastPrimaryTerm: UInt64 = 0
    /// The campaign under way: its in-sync record and the lease its key is attached to.
    private var campaign: (inSync: InSyncRecord, lease: Int64)?
    /// The wait after a hand-over to another member.
    private var quietPeriod = HandOverQuietPeriod()
    /// The primary this member followed until it went silent, and when (monotonic
    /// milliseconds): taken over if the keys read next still name it and allow it, and the
    /// silence is recent.
    private var silentPrimary: (record: PrimaryRecord, at: Int64)?

    package init(member: PrimaryRecord, mayStartOrdinal: Bool, acknowledgement: ReplicationSettings.Acknowledgement) {
        self.member = member
        self.mayStartOrdinal = mayStartOrdinal
        self.acknowledgement = acknowledgement
    }

    /// The highest term the member knows of: its own, or the keys'.
    package var knownTerm: UInt64 {
        max(highestTerm, keys?.term ?? 0)
    }

    /// Whether keys are known that the role does not match: the running loop is to end.
    package var keysContradictRole: Bool {
        keys.map { !matches($0) } ?? false
    }

    /// Takes what happened and says what to do next.
    package mutating func step(_ input: Input, _ facts: Facts) -> Effect {
        switch input {
        case .started, .waited:
            break
        case .keys(let state):
            keys = state
        case .keysUnreadable:
            if !facts.stopping { return .wait(milliseconds: Self.unreadableKeysMilliseconds) }
        case .resigned, .tookOver:
            keys = nil
        case .campaignEnded(let outcome):
            if let effect = campaignEnded(outcome, facts) { return effect }
        case .roleEnded(let ending):
            let ended = role
            take(.waiting)
            // The keys seen while in the role are stale once it ends.
            keys = nil
            if ending == .stopped, case .primary(_, let guardRevision) = ended {
                // A stop without a hand-over frees the ordinal at once instead of after the TTL.
                return .resign(guardRevision: guardRevision)
            }
            if ending == .primarySilent, case .standby(let primary) = ended { silentPrimary = (primary, facts.now) }
        }
        if facts.stopping { return .exit }
        guard let state = keys else { return .readKeys }
        return decide(state, facts)
    }

    /// Stores keys seen by a watcher; true when the role does not match them and its loop is
    /// to end.
    package mutating func observe(_ state: OrdinalState) -> Bool {
        keys = state
        return !matches(state)
    }

    /// Whether the keys agree with the role the member is in.
    package func matches(_ state: OrdinalState) -> Bool {
        switch role {
        case .waiting, .candidate:
            state.primary == nil
        case .standby(let primary):
            state.primary == primary
        case .primary(_, let guardRevision):
            state.primary?.member == member.member && state.primaryRevision == guardRevision
        }
    }

    /// Whether this member may take over from `primary`, which it followed and which went
    /// silent, with the keys `state` (section 6.5): only under `--replication-ack standby`, where
    /// no acknowledgement can complete without it once it stops confirming (section 7.4), and
    /// only while the keys still name that primary and record this member in sync in their
    /// latest term, under `standby` too.
    package func mayTakeOver(from primary: PrimaryRecord, _ state: OrdinalState) -> Bool {
        guard acknowledgement == .standby, state.primary == primary, let inSync = state.inSync else { return false }
        return inSync.term == state.term && inSync.ack == ReplicationSettings.Acknowledgement.standby.rawValue
            && inSync.standbys.contains(member.member)
    }

    /// Whether the member follows a primary that it may take over with the keys last seen, were
    /// it to go silent.
    package var mayTakeOverNow: Bool {
        guard case .standby(let primary) = role, let keys else { return false }
        return mayTakeOver(from: primary, keys)
    }

    /// Campaigns for the term after both the keys' and this member's own, without the
    /// eligibility check (which ``step(_:_:)`` makes first; the simulation's planted bug skips it).
    package mutating func campaign(over state: OrdinalState, _ facts: Facts) -> Effect {
        let term = max(state.term, facts.ownLastTerm?.term ?? 0) + 1
        var record = member
        record.term = term
        let inSync = InSyncRecord(
            term: term,
            standbys: (state.inSync?.standbys ?? []).filter { $0 != member.member },
            ack: acknowledgement.rawValue
        )
        take(.candidate(term: term))
        campaign = (inSync, facts.lease)
        return .campaign(record, inSync, over: state)
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

    /// What to do with the keys.
    private mutating func decide(_ state: OrdinalState, _ facts: Facts) -> Effect {
        let silent = silentPrimary.flatMap { facts.now - $0.at <= Self.silenceValidityMilliseconds ? $0.record : nil }
        silentPrimary = nil
        if let primary = state.primary {
            guard primary.term >= highestTerm else {
                // Keys older than a term this member already took (a watcher's event that arrived
                // after a fresher read): never a term back; read them again.
                keys = nil
                return .wait(milliseconds: Self.campaignRetryMilliseconds)
            }
            if primary.member == member.member { return .resign(guardRevision: state.primaryRevision) }
            // Without a lease this member could not campaign after the takeover.
            if let silent, facts.lease != 0, mayTakeOver(from: silent, state) {
                return .takeOver(HandOverRecord(term: state.term, to: member.member), over: state)
            }
            take(.standby(primary))
            return .follow(primary)
        }
        let quiet = quietPeriod.remaining(
            after: state.handOver,
            term: state.term,
            member: member.member,
            now: facts.now
        )
        guard isEligible(state, ownLastTerm: facts.ownLastTerm), quiet == nil else {
            take(.waiting)
            return .wait(milliseconds: min(quiet ?? Self.waitingMilliseconds, Self.waitingMilliseconds))
        }
        // Without a lease no campaign can win: wait, quietly, for the coordinator's next grant.
        guard facts.lease != 0 else {
            take(.waiting)
            return .wait(milliseconds: Self.campaignRetryMilliseconds)
        }
        return campaign(over: state, facts)
    }

    /// What follows a campaign's end; nil to decide with the keys.
    private mutating func campaignEnded(_ outcome: CampaignOutcome?, _ facts: Facts) -> Effect? {
        guard case .candidate(let term) = role, let campaign else {
            preconditionFailure("member \(member.member): a campaign ended that the machine did not start")
        }
        self.campaign = nil
        switch outcome {
        case .won(let guardRevision):
            // The keys seen so far name no primary: the ones that name this member come next.
            keys = nil
            if facts.stopping {
                take(.waiting)
                return .resign(guardRevision: guardRevision)
            }
            take(.primary(term: term, guardRevision: guardRevision))
            return .serve(
                term: term,
                guardRevision: guardRevision,
                lease: campaign.lease,
                recorded: Set(campaign.inSync.standbys)
            )
        case .lost(let now):
            take(.waiting)
            keys = now
            return nil
        case nil:
            // Not at once: a member whose lease is gone (etcd back after a pause, say) fails every
            // campaign until the coordinator's next grant, and retried in a loop it logged hundreds
            // of failures a second.
            take(.waiting)
            keys = nil
            return facts.stopping ? nil : .wait(milliseconds: Self.campaignRetryMilliseconds)
        }
    }

    /// Takes a new role (internal for the invariants' tests).
    mutating func take(_ new: Role) {
        let term: UInt64
        switch new {
        case .waiting: term = highestTerm
        case .candidate: term = highestTerm
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
