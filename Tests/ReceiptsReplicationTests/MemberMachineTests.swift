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

    /// A row: the keys, b's own last term, whether b holds a lease, the quiet period left, and
    /// what b does.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var state: OrdinalState
        var ownLastTerm: TermHistory.Entry? = nil
        var holdsLease = true
        var quiet: Int64? = nil
        var mayStartOrdinal = false
        var action: MemberMachine.Action
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(
            name: "another member is primary: follow it",
            state: OrdinalState(primary: record("a", term: 4), primaryRevision: 9, term: 4),
            action: .follow(record("a", term: 4))
        ),
        Row(
            name: "the keys name b from an earlier run: resign at that revision",
            state: OrdinalState(primary: record("b", term: 4), primaryRevision: 9, term: 4),
            action: .resign(guardRevision: 9)
        ),
        Row(
            name: "no primary, b in the latest term's in-sync set: campaign for the next term",
            state: OrdinalState(term: 4, inSync: InSyncRecord(term: 4, standbys: ["b", "c"], ack: "standby")),
            action: .campaign(record("b", term: 5), InSyncRecord(term: 5, standbys: ["c"], ack: "standby"))
        ),
        Row(
            name: "no primary, b in an older term's in-sync set only: not eligible",
            state: OrdinalState(term: 4, inSync: InSyncRecord(term: 3, standbys: ["b"], ack: "standby")),
            action: .stayWaiting(milliseconds: 1000)
        ),
        Row(
            name: "no primary, b wrote the latest term: eligible, and the term follows its own",
            state: OrdinalState(term: 4),
            ownLastTerm: TermHistory.Entry(term: 4, start: 100, member: "b"),
            action: .campaign(record("b", term: 5), InSyncRecord(term: 5, standbys: [], ack: "standby"))
        ),
        Row(
            name: "b's own terms file is ahead of the keys (etcd restored from a backup): never a term again",
            state: OrdinalState(term: 2, inSync: InSyncRecord(term: 2, standbys: ["b"], ack: "standby")),
            ownLastTerm: TermHistory.Entry(term: 7, start: 100, member: "b"),
            action: .campaign(record("b", term: 8), InSyncRecord(term: 8, standbys: [], ack: "standby"))
        ),
        Row(
            name: "another member wrote the latest term and b is not in sync: not eligible",
            state: OrdinalState(term: 4),
            ownLastTerm: TermHistory.Entry(term: 4, start: 100, member: "a"),
            action: .stayWaiting(milliseconds: 1000)
        ),
        Row(
            name: "an ordinal's first term, b of the first member set: campaign for term 1",
            state: OrdinalState(),
            mayStartOrdinal: true,
            action: .campaign(record("b", term: 1), InSyncRecord(term: 1, standbys: [], ack: "standby"))
        ),
        Row(
            name: "an ordinal's first term, b not of the first member set: wait",
            state: OrdinalState(),
            action: .stayWaiting(milliseconds: 1000)
        ),
        Row(
            name: "eligible but a hand-over's quiet period runs: wait what remains of it",
            state: OrdinalState(term: 4, inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby")),
            quiet: 300,
            action: .stayWaiting(milliseconds: 300)
        ),
        Row(
            name: "a long quiet period is waited in steps of at most a second",
            state: OrdinalState(term: 4, inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby")),
            quiet: 1800,
            action: .stayWaiting(milliseconds: 1000)
        ),
        Row(
            name: "eligible without a lease: wait for the grant, no campaign",
            state: OrdinalState(term: 4, inSync: InSyncRecord(term: 4, standbys: ["b"], ack: "standby")),
            holdsLease: false,
            action: .awaitLease(milliseconds: 100)
        ),
    ]

    @Test(arguments: rows)
    func whatAMemberDoesWithTheKeys(row: Row) {
        let machine = Self.machine(mayStartOrdinal: row.mayStartOrdinal)
        let action = machine.next(
            state: row.state,
            ownLastTerm: row.ownLastTerm,
            holdsLease: row.holdsLease,
            quietMilliseconds: row.quiet
        )
        #expect(action == row.action)
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

    /// The invariants stop the process: a term that goes back, a second primary role in one term.
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
    }
}
