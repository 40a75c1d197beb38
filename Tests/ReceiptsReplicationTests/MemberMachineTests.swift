import Testing

@testable import ReceiptsReplication

/// `MemberMachine`'s transitions as tables: what a member does with the ordinal's keys, whether
/// keys agree with its role, and the invariants it keeps (deploy/REPLICATION.md, sections 2 and 6).
struct MemberMachineTests {
    static func record(_ member: String, term: UInt64 = 0) -> PrimaryRecord {
        PrimaryRecord(
            member: member,
            term: term,
            replication: "tcp://\(member):7003",
            ingest: "tcp://\(member):7001",
            query: "tcp://\(member):7002",
            publish: "tcp://\(member):7004"
        )
    }

    static func machine(mayStartOrdinal: Bool = false) -> MemberMachine {
        MemberMachine(member: record("b"), mayStartOrdinal: mayStartOrdinal, acknowledgement: .standby)
    }

    static func facts(
        ownLastTerm: TermHistory.Entry? = nil,
        lease: Int64 = 7,
        stopping: Bool = false,
        now: Int64 = 0
    )
        -> MemberMachine.Facts
    {
        MemberMachine.Facts(ownLastTerm: ownLastTerm, lease: lease, stopping: stopping, now: now)
    }

    /// A row: the keys read, b's own last term, whether b holds a lease, and what b does.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var state: OrdinalState
        var ownLastTerm: TermHistory.Entry? = nil
        var holdsLease = true
        var mayStartOrdinal = false
        var effect: MemberMachine.Effect
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "another member is primary: follow it",
            state: OrdinalState(primary: record("a", term: 4), primaryRevision: 9, term: 4),
            effect: .follow(record("a", term: 4))
        ),
        Row(
            name: "the keys name b from an earlier run: resign at that revision",
            state: OrdinalState(primary: record("b", term: 4), primaryRevision: 9, term: 4),
            effect: .resign(guardRevision: 9)
        ),
        Row(
            name: "no primary, b in the latest term's in-sync set: campaign for the next term",
            state: OrdinalState(term: 4, inSync: InSyncRecord(term: 4, standbys: ["b", "c"], ack: "standby")),
            effect: .campaign(
                record("b", term: 5),
                InSyncRecord(term: 5, standbys: ["c"], ack: "standby"),
                over: OrdinalState()
            )
        ),
        Row(
            name: "no primary, b in an older term's in-sync set only: not eligible",
            state: OrdinalState(term: 4, inSync: InSyncRecord(term: 3, standbys: ["b"], ack: "standby")),
            effect: .wait(milliseconds: 1000)
        ),
        Row(
            name: "no primary, b wrote the latest term: eligible, and the term follows its own",
            state: OrdinalState(term: 4),
            ownLastTerm: TermHistory.Entry(term: 4, start: 100, member: "b"),
            effect: .campaign(
                record("b", term: 5),
                InSyncRecord(term: 5, standbys: [], ack: "standby"),
                over: OrdinalState()
            )
        ),
        Row(
            name: "b's own terms file is ahead of the keys (etcd restored from a backup): never a term again",
            state: OrdinalState(term: 2, inSync: InSyncRecord(term: 2, standbys: ["b"], ack: "standby")),
            ownLastTerm: TermHistory.Entry(term: 7, start: 100, member: "b"),
            effect: .campaign(
                record("b", term: 8),
                InSyncRecord(term: 8, standbys: [], ack: "standby"),
                over: OrdinalState()
            )
        ),
        Row(
            name: "another member wrote the latest term and b is not in sync: not eligible",
            state: OrdinalState(term: 4),
            ownLastTerm: TermHistory.Entry(term: 4, start: 100, member: "a"),
            effect: .wait(milliseconds: 1000)
        ),
        Row(
            name: "an ordinal's first term, b of the first member set: campaign for term 1",
            state: OrdinalState(),
            mayStartOrdinal: true,
            effect: .campaign(
                record("b", term: 1),
                InSyncRecord(term: 1, standbys: [], ack: "standby"),
                over: OrdinalState()
            )
        ),
        Row(
            name: "an ordinal's first term, b not of the first member set: wait",
            state: OrdinalState(),
            effect: .wait(milliseconds: 1000)
        ),
        Row(
            name: "eligible without a lease: wait for the grant, no campaign",
            state: OrdinalState(term: 4, inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby")),
            holdsLease: false,
            effect: .wait(milliseconds: 100)
        ),
    ]

    @Test(arguments: rows)
    func whatAMemberDoesWithTheKeys(row: Row) {
        var machine = Self.machine(mayStartOrdinal: row.mayStartOrdinal)
        let effect = machine.step(
            .keys(row.state),
            Self.facts(ownLastTerm: row.ownLastTerm, lease: row.holdsLease ? 7 : 0)
        )
        // A campaign is over the keys it decided with.
        if case .campaign(let record, let inSync, _) = row.effect {
            #expect(effect == .campaign(record, inSync, over: row.state))
            #expect(machine.role == .candidate(term: record.term))
        } else {
            #expect(effect == row.effect)
        }
    }

    @Test func keysAreReadFirstAndAgainAfterAFailedRead() {
        var machine = Self.machine()
        #expect(machine.step(.started, Self.facts()) == .readKeys)
        #expect(machine.step(.keysUnreadable, Self.facts()) == .wait(milliseconds: 500))
        #expect(machine.step(.waited, Self.facts()) == .readKeys)
        #expect(machine.role == .waiting)
    }

    static let eligible = OrdinalState(term: 4, inSync: InSyncRecord(term: 4, standbys: ["b", "c"], ack: "standby"))

    /// The lease is the one read before the campaign: one granted meanwhile can only make the new
    /// primary stop acknowledging, never acknowledge on a key that is gone.
    @Test func aWonCampaignServesWithTheLeaseReadBeforeItAndTheRecordedStandbys() {
        var machine = Self.machine()
        _ = machine.step(.keys(Self.eligible), Self.facts(lease: 7))
        #expect(
            machine.step(.campaignEnded(.won(guardRevision: 12)), Self.facts(lease: 9))
                == .serve(term: 5, guardRevision: 12, lease: 7, recorded: ["c"])
        )
        #expect(machine.role == .primary(term: 5, guardRevision: 12))
        #expect(machine.keys == nil, "the keys that name b come next")
    }

    @Test func aLostCampaignDecidesWithTheKeysItLostTo() {
        var machine = Self.machine()
        _ = machine.step(.keys(Self.eligible), Self.facts())
        let a5 = Self.record("a", term: 5)
        let now = OrdinalState(primary: a5, primaryRevision: 12, term: 5)
        #expect(machine.step(.campaignEnded(.lost(now)), Self.facts()) == .follow(a5))
        #expect(machine.role == .standby(a5))
    }

    /// A member whose lease is gone fails every campaign until the next grant: never at once.
    @Test func aCampaignOfUnknownOutcomeIsTriedAgainAfterAWaitWithKeysReadAgain() {
        var machine = Self.machine()
        _ = machine.step(.keys(Self.eligible), Self.facts())
        #expect(machine.step(.campaignEnded(nil), Self.facts()) == .wait(milliseconds: 100))
        #expect(machine.role == .waiting)
        #expect(machine.step(.waited, Self.facts()) == .readKeys)
    }

    @Test func aHandOverToAnotherMemberIsWaitedOutAndToThisOneIsNot() {
        var toC = Self.eligible
        toC.handOver = HandOverRecord(term: 4, to: "c")
        var machine = Self.machine()
        #expect(machine.step(.keys(toC), Self.facts(now: 0)) == .wait(milliseconds: 1000))
        #expect(machine.step(.waited, Self.facts(now: 1000)) == .wait(milliseconds: 1000))
        #expect(machine.step(.waited, Self.facts(now: 1700)) == .wait(milliseconds: 300))
        #expect(
            machine.step(.waited, Self.facts(now: 2000))
                == .campaign(
                    Self.record("b", term: 5),
                    InSyncRecord(term: 5, standbys: ["c"], ack: "standby"),
                    over: toC
                )
        )

        var toB = Self.eligible
        toB.handOver = HandOverRecord(term: 4, to: "b")
        var named = Self.machine()
        #expect(
            named.step(.keys(toB), Self.facts(now: 0))
                == .campaign(
                    Self.record("b", term: 5),
                    InSyncRecord(term: 5, standbys: ["c"], ack: "standby"),
                    over: toB
                )
        )
    }

    /// The keys of a4's term, with the given in-sync record.
    static func followingA(inSync: InSyncRecord?) -> OrdinalState {
        OrdinalState(primary: record("a", term: 4), primaryRevision: 9, term: 4, inSync: inSync, inSyncRevision: 10)
    }

    /// Section 6.5: a standby of the in-sync set whose primary went silent reads the keys; while
    /// they still name that primary, it hands the term over to itself on the primary's behalf and
    /// campaigns at once, before the primary's lease expires.
    @Test func aStandbyInSyncTakesOverFromItsSilentPrimaryAndCampaignsAtOnce() {
        var machine = Self.machine()
        let keys = Self.followingA(inSync: InSyncRecord(term: 4, standbys: ["b", "c"], ack: "standby"))
        #expect(machine.step(.keys(keys), Self.facts()) == .follow(Self.record("a", term: 4)))
        #expect(machine.mayTakeOverNow)
        #expect(machine.step(.roleEnded(.primarySilent), Self.facts()) == .readKeys)
        #expect(machine.role == .waiting)
        #expect(
            machine.step(.keys(keys), Self.facts()) == .takeOver(HandOverRecord(term: 4, to: "b"), over: keys)
        )
        var deposed = keys
        deposed.primary = nil
        deposed.primaryRevision = 0
        deposed.handOver = HandOverRecord(term: 4, to: "b")
        #expect(machine.step(.tookOver, Self.facts()) == .readKeys)
        #expect(
            machine.step(.keys(deposed), Self.facts())
                == .campaign(
                    Self.record("b", term: 5),
                    InSyncRecord(term: 5, standbys: ["c"], ack: "standby"),
                    over: deposed
                )
        )
    }

    /// A row: the keys read after b's primary a (term 4, revision 9) went silent, and what b does.
    struct SilenceRow: Sendable, CustomTestStringConvertible {
        var name: String
        var state: OrdinalState
        var acknowledgement = ReplicationSettings.Acknowledgement.standby
        /// When the keys come, after the silence (milliseconds).
        var after: Int64 = 0
        var holdsLease = true
        var effect: MemberMachine.Effect
        var testDescription: String { name }
    }

    static let silenceRows: [SilenceRow] = [
        SilenceRow(
            name: "in sync under standby: take over",
            state: followingA(inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby")),
            effect: .takeOver(
                HandOverRecord(term: 4, to: "b"),
                over: followingA(inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby"))
            )
        ),
        SilenceRow(
            name: "not in the in-sync set: follow a again (its lease decides)",
            state: followingA(inSync: InSyncRecord(term: 4, standbys: ["c"], ack: "standby")),
            effect: .follow(record("a", term: 4))
        ),
        SilenceRow(
            name: "in an older term's set only: follow a again",
            state: followingA(inSync: InSyncRecord(term: 3, standbys: ["b"], ack: "standby")),
            effect: .follow(record("a", term: 4))
        ),
        SilenceRow(
            name: "no in-sync key: follow a again",
            state: followingA(inSync: nil),
            effect: .follow(record("a", term: 4))
        ),
        SilenceRow(
            name: "a set kept under local: a could still acknowledge alone; follow a again",
            state: followingA(inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "local")),
            effect: .follow(record("a", term: 4))
        ),
        SilenceRow(
            name: "b acknowledges locally itself: follow a again",
            state: followingA(inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby")),
            acknowledgement: .local,
            effect: .follow(record("a", term: 4))
        ),
        SilenceRow(
            name: "in sync, but the keys came over a second after the silence: follow a again",
            state: followingA(inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby")),
            after: 1001,
            effect: .follow(record("a", term: 4))
        ),
        SilenceRow(
            name: "in sync, but without a lease (no campaign could follow): follow a again",
            state: followingA(inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby")),
            holdsLease: false,
            effect: .follow(record("a", term: 4))
        ),
        SilenceRow(
            name: "another member took over meanwhile: follow it",
            state: OrdinalState(
                primary: record("c", term: 5),
                primaryRevision: 14,
                term: 5,
                inSync: InSyncRecord(term: 5, standbys: ["b"], ack: "standby")
            ),
            effect: .follow(record("c", term: 5))
        ),
        SilenceRow(
            name: "a is gone already: campaign",
            state: OrdinalState(term: 4, inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby")),
            effect: .campaign(
                record("b", term: 5),
                InSyncRecord(term: 5, standbys: [], ack: "standby"),
                over: OrdinalState(term: 4, inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby"))
            )
        ),
    ]

    @Test(arguments: silenceRows)
    func whatAStandbyDoesWhenItsPrimaryWentSilent(row: SilenceRow) {
        var machine = MemberMachine(
            member: Self.record("b"),
            mayStartOrdinal: false,
            acknowledgement: row.acknowledgement
        )
        _ = machine.step(.keys(Self.followingA(inSync: nil)), Self.facts())
        #expect(machine.step(.roleEnded(.primarySilent), Self.facts(now: 5000)) == .readKeys)
        let facts = Self.facts(lease: row.holdsLease ? 7 : 0, now: 5000 + row.after)
        #expect(machine.step(.keys(row.state), facts) == row.effect)
    }

    /// Silence counts once: keys read for another reason later follow the primary, whatever
    /// they record.
    @Test func aTakeoverIsDecidedOnlyWithTheKeysReadRightAfterTheSilence() {
        var machine = Self.machine()
        let keys = Self.followingA(inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby"))
        _ = machine.step(.keys(keys), Self.facts())
        _ = machine.step(.roleEnded(.primarySilent), Self.facts())
        #expect(machine.step(.keysUnreadable, Self.facts()) == .wait(milliseconds: 500))
        #expect(machine.step(.waited, Self.facts()) == .readKeys)
        #expect(
            machine.step(.keys(keys), Self.facts()) == .takeOver(HandOverRecord(term: 4, to: "b"), over: keys)
        )
        #expect(machine.step(.tookOver, Self.facts()) == .readKeys)
        #expect(machine.step(.keys(keys), Self.facts()) == .follow(Self.record("a", term: 4)), "the takeover failed")
        #expect(machine.step(.roleEnded(.left), Self.facts()) == .readKeys)
        #expect(machine.step(.keys(keys), Self.facts()) == .follow(Self.record("a", term: 4)))
    }

    /// Whether a takeover is possible is asked by the standby's loop before it ends on silence.
    @Test func aStandbyMayTakeOverOnlyWhileTheKeysRecordItInSync() {
        var machine = Self.machine()
        #expect(!machine.mayTakeOverNow, "not a standby")
        _ = machine.step(
            .keys(Self.followingA(inSync: InSyncRecord(term: 4, standbys: ["c"], ack: "standby"))),
            Self.facts()
        )
        #expect(!machine.mayTakeOverNow)
        _ = machine.observe(Self.followingA(inSync: InSyncRecord(term: 4, standbys: ["b", "c"], ack: "standby")))
        #expect(machine.mayTakeOverNow)
        _ = machine.observe(Self.followingA(inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "local")))
        #expect(!machine.mayTakeOverNow)
    }

    /// After any role the keys are read again: those seen in it are stale.
    @Test(arguments: [MemberMachine.RoleEnding.left, .handedOver])
    func aRoleThatEndsReadsTheKeysAgain(ending: MemberMachine.RoleEnding) {
        var machine = Self.machine()
        _ = machine.step(.keys(Self.eligible), Self.facts())
        _ = machine.step(.campaignEnded(.won(guardRevision: 12)), Self.facts())
        let leaves = machine.observe(OrdinalState(term: 6))
        #expect(leaves, "keys without b end b's term")
        #expect(machine.step(.roleEnded(ending), Self.facts()) == .readKeys)
        #expect(machine.role == .waiting)
        #expect(machine.knownTerm == 5)
    }

    /// A stop frees the ordinal at once: a primary, and a member that won a campaign as the stop
    /// came, give the key back; any other role just ends.
    @Test func aStopGivesBackAKeyThisMemberHoldsAndThenExits() {
        var primary = Self.machine()
        _ = primary.step(.keys(Self.eligible), Self.facts())
        _ = primary.step(.campaignEnded(.won(guardRevision: 12)), Self.facts())
        #expect(primary.step(.roleEnded(.stopped), Self.facts(stopping: true)) == .resign(guardRevision: 12))
        #expect(primary.step(.resigned, Self.facts(stopping: true)) == .exit)

        var winner = Self.machine()
        _ = winner.step(.keys(Self.eligible), Self.facts())
        #expect(
            winner.step(.campaignEnded(.won(guardRevision: 12)), Self.facts(stopping: true))
                == .resign(guardRevision: 12)
        )
        #expect(winner.role == .waiting, "never primary")

        var standby = Self.machine()
        let a4 = Self.record("a", term: 4)
        #expect(
            standby.step(.keys(OrdinalState(primary: a4, primaryRevision: 9, term: 4)), Self.facts()) == .follow(a4)
        )
        #expect(standby.step(.roleEnded(.stopped), Self.facts(stopping: true)) == .exit)

        var reading = Self.machine()
        #expect(reading.step(.keysUnreadable, Self.facts(stopping: true)) == .exit)
    }

    /// A watcher's event can arrive after a fresher read: keys naming a primary of a term below
    /// one the member took are read again, never followed (following would take a term back).
    @Test func keysNamingAnOlderTermsPrimaryAreReadAgainNotFollowed() {
        var machine = Self.machine()
        let a5 = Self.record("a", term: 5)
        #expect(
            machine.step(.keys(OrdinalState(primary: a5, primaryRevision: 12, term: 5)), Self.facts()) == .follow(a5)
        )
        let left = machine.step(.roleEnded(.left), Self.facts())
        #expect(left == .readKeys)
        let stale = OrdinalState(primary: Self.record("c", term: 4), primaryRevision: 9, term: 4)
        _ = machine.observe(stale)
        #expect(machine.step(.waited, Self.facts()) == .wait(milliseconds: 100))
        #expect(machine.keys == nil)
        #expect(machine.step(.waited, Self.facts()) == .readKeys)
    }

    @Test func watchedKeysEndARoleTheyDoNotMatch() {
        var machine = Self.machine()
        let a4 = Self.record("a", term: 4)
        let a = OrdinalState(primary: a4, primaryRevision: 9, term: 4)
        _ = machine.step(.keys(a), Self.facts())
        let stays = !machine.observe(a)
        #expect(stays && !machine.keysContradictRole)
        let leaves = machine.observe(OrdinalState(term: 4))
        #expect(leaves && machine.keysContradictRole)
    }

    @Test func keysMatchTheRoleOnlyWhileTheyNameWhatTheMemberIsIn() {
        var machine = Self.machine()
        let a4 = Self.record("a", term: 4)
        let none = OrdinalState(term: 4)
        let a = OrdinalState(primary: a4, primaryRevision: 9, term: 4)
        let b = OrdinalState(primary: Self.record("b", term: 5), primaryRevision: 12, term: 5)
        #expect(machine.matches(none) && !machine.matches(a))
        machine.take(.standby(a4))
        #expect(machine.matches(a) && !machine.matches(none) && !machine.matches(b))
        // The same member named primary in a new term is another primary to follow.
        #expect(!machine.matches(OrdinalState(primary: Self.record("a", term: 6), primaryRevision: 20, term: 6)))
        machine.take(.primary(term: 5, guardRevision: 12))
        #expect(machine.matches(b) && !machine.matches(a) && !machine.matches(none))
        // A key of b's created again (a new revision) is not the one this term holds.
        #expect(!machine.matches(OrdinalState(primary: Self.record("b", term: 5), primaryRevision: 13, term: 5)))
        machine.take(.waiting)
        #expect(machine.matches(none))
        #expect(machine.highestTerm == 5)
    }

    @Test func rolesMoveForwardInTerm() {
        var machine = Self.machine()
        machine.take(.standby(Self.record("a", term: 3)))
        machine.take(.waiting)
        machine.take(.primary(term: 4, guardRevision: 1))
        machine.take(.standby(Self.record("c", term: 6)))
        #expect(machine.role == .standby(Self.record("c", term: 6)))
        #expect(machine.highestTerm == 6)
        // Deposed, the member may win the next term straight from its old one (no primary was
        // named in between, as when its lease expired and it campaigned at once).
        machine.take(.primary(term: 7, guardRevision: 3))
        machine.take(.primary(term: 8, guardRevision: 5))
        #expect(machine.role == .primary(term: 8, guardRevision: 5))
    }

    /// The invariants stop the process: a term that goes back, a second primary role in one term,
    /// a campaign's end that no campaign began.
    @Test func aTermThatGoesBackOrASecondPrimaryRoleInATermStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            var machine = MemberMachineTests.machine()
            machine.take(.standby(MemberMachineTests.record("a", term: 6)))
            machine.take(.primary(term: 5, guardRevision: 1))
        }
        await #expect(processExitsWith: .failure) {
            var machine = MemberMachineTests.machine()
            machine.take(.primary(term: 5, guardRevision: 1))
            machine.take(.primary(term: 5, guardRevision: 2))
        }
        await #expect(processExitsWith: .failure) {
            var machine = MemberMachineTests.machine()
            _ = machine.step(.campaignEnded(.won(guardRevision: 1)), MemberMachineTests.facts())
        }
    }
}
