import Testing

@testable import ReceiptsReplication

/// The in-sync set (deploy/REPLICATION.md, section 5.3): who acknowledgements wait for, how a
/// standby joins and leaves, and what happens with none in sync.
@Suite struct InSyncSetTests {
    static func standby(
        _ member: String,
        appended: UInt64,
        durable: UInt64,
        heard: Int64,
        session: UInt64 = 1
    ) -> StandbyProgress {
        StandbyProgress(
            member: member,
            session: session,
            appended: appended,
            durable: durable,
            applied: durable,
            lastHeard: heard
        )
    }

    @Test func anEmptySetUnderStallHoldsThePositionAndStallsAfterTheTimeout() {
        var set = InSyncSet(
            position: 100,
            acknowledgement: .standby,
            fallback: .stall,
            timeoutMilliseconds: 1000,
            now: 0
        )
        let early = set.update(standbys: [], acknowledged: 100, primaryDurable: 500, now: 999)
        #expect(early == InSyncSet.Verdict(replicatedPosition: 100, stalled: false, unsynced: false))
        let late = set.update(standbys: [], acknowledged: 100, primaryDurable: 500, now: 1001)
        #expect(late == InSyncSet.Verdict(replicatedPosition: 100, stalled: true, unsynced: false))
    }

    @Test func anEmptySetUnderLocalAcknowledgesAlone() {
        var set = InSyncSet(
            position: 100,
            acknowledgement: .standby,
            fallback: .local,
            timeoutMilliseconds: 1000,
            now: 0
        )
        let verdict = set.update(standbys: [], acknowledged: 100, primaryDurable: 500, now: 10)
        #expect(verdict == InSyncSet.Verdict(replicatedPosition: .max, stalled: false, unsynced: true))
    }

    /// Found by the cluster simulation (seed 64): a new primary's recorded standbys gate from 0,
    /// so its acknowledged position is 0 until they confirm; a lagging standby that follows then
    /// must not join at 0, or it is recorded in sync (and may be promoted) without the records
    /// acknowledged in earlier terms. It joins at the position the set started from: everything
    /// the primary recovered.
    @Test func aStandbyJoiningANewPrimaryMustHoldWhatThePrimaryRecovered() {
        var set = InSyncSet(
            position: 267,
            acknowledgement: .standby,
            fallback: .stall,
            timeoutMilliseconds: 1000,
            recorded: ["c"],
            now: 0
        )
        #expect(set.update(standbys: [], acknowledged: 267, primaryDurable: 267, now: 0).replicatedPosition == 0)
        // c is silent; b, which lacks records of the earlier term, follows.
        let lagging = [Self.standby("b", appended: 72, durable: 72, heard: 1500)]
        let verdict = set.update(standbys: lagging, acknowledged: 0, primaryDurable: 267, now: 1500)
        #expect(set.members["b"] == nil && set.joining["b"] == nil, "b joined without what was acknowledged")
        #expect(set.wanted == ["c"], "c stays: no standby may replace it without the recovered records")
        #expect(verdict.replicatedPosition == 0)
        // Once b holds everything recovered, it joins there, and counts once it confirms it.
        let caughtUp = [Self.standby("b", appended: 300, durable: 267, heard: 1600)]
        _ = set.update(standbys: caughtUp, acknowledged: 0, primaryDurable: 300, now: 1600)
        #expect(set.members["b"] == 267)
    }

    @Test func aStandbyJoinsAtTheAcknowledgedPositionAndCountsOnceItConfirmsIt() {
        var set = InSyncSet(position: 0, acknowledgement: .standby, fallback: .local, timeoutMilliseconds: 1000, now: 0)
        // Behind what was acknowledged: not close enough to join.
        var verdict = set.update(
            standbys: [Self.standby("b", appended: 300, durable: 300, heard: 10)],
            acknowledged: 400,
            primaryDurable: 450,
            now: 10
        )
        #expect(verdict.unsynced)
        #expect(set.joining.isEmpty)
        // It has received everything acknowledged: it gates at A₀ = 400 until it confirms it.
        verdict = set.update(
            standbys: [Self.standby("b", appended: 420, durable: 350, heard: 20)],
            acknowledged: 400,
            primaryDurable: 450,
            now: 20
        )
        #expect(verdict == InSyncSet.Verdict(replicatedPosition: 400, stalled: false, unsynced: false))
        #expect(set.joining == ["b": 400])
        verdict = set.update(
            standbys: [Self.standby("b", appended: 450, durable: 430, heard: 30)],
            acknowledged: 400,
            primaryDurable: 450,
            now: 30
        )
        #expect(set.members == ["b": 430])
        #expect(verdict.replicatedPosition == 430)
    }

    @Test func underLocalASilentMemberThatLacksRecordsLeaves() {
        var set = InSyncSet(position: 0, acknowledgement: .standby, fallback: .local, timeoutMilliseconds: 1000, now: 0)
        _ = set.update(
            standbys: [Self.standby("b", appended: 0, durable: 0, heard: 0)],
            acknowledged: 0,
            primaryDurable: 0,
            now: 0
        )
        _ = set.update(
            standbys: [Self.standby("b", appended: 0, durable: 0, heard: 0)],
            acknowledged: 0,
            primaryDurable: 0,
            now: 1
        )
        #expect(set.members == ["b": 0])
        // Silent past the timeout, and the primary has records it lacks.
        let verdict = set.update(
            standbys: [Self.standby("b", appended: 0, durable: 0, heard: 0)],
            acknowledged: 0,
            primaryDurable: 90,
            now: 1001
        )
        #expect(set.members.isEmpty)
        #expect(verdict.unsynced)
    }

    @Test func aSilentMemberThatLacksNothingStays() {
        var set = InSyncSet(position: 0, acknowledgement: .standby, fallback: .local, timeoutMilliseconds: 1000, now: 0)
        _ = set.update(
            standbys: [Self.standby("b", appended: 50, durable: 50, heard: 0)],
            acknowledged: 50,
            primaryDurable: 50,
            now: 0
        )
        let verdict = set.update(
            standbys: [Self.standby("b", appended: 50, durable: 50, heard: 0)],
            acknowledged: 50,
            primaryDurable: 50,
            now: 5000
        )
        #expect(set.members == ["b": 50])
        #expect(verdict.replicatedPosition == 50)
    }

    @Test func underStallTheLastMemberStaysAndNewIngestStalls() {
        var set = InSyncSet(position: 0, acknowledgement: .standby, fallback: .stall, timeoutMilliseconds: 1000, now: 0)
        let both = [
            Self.standby("b", appended: 10, durable: 10, heard: 0),
            Self.standby("c", appended: 10, durable: 10, heard: 0),
        ]
        _ = set.update(standbys: both, acknowledged: 10, primaryDurable: 10, now: 0)
        _ = set.update(standbys: both, acknowledged: 10, primaryDurable: 10, now: 1)
        #expect(set.members.count == 2)
        // c goes on confirming, b goes silent: b leaves, c stays.
        var verdict = set.update(
            standbys: [
                Self.standby("b", appended: 10, durable: 10, heard: 0),
                Self.standby("c", appended: 80, durable: 80, heard: 1500),
            ],
            acknowledged: 10,
            primaryDurable: 80,
            now: 1500
        )
        #expect(set.members == ["c": 80])
        #expect(verdict == InSyncSet.Verdict(replicatedPosition: 80, stalled: false, unsynced: false))
        // c goes silent too: it stays, the position holds, and after the timeout ingest stalls.
        verdict = set.update(
            standbys: [Self.standby("c", appended: 80, durable: 80, heard: 1500)],
            acknowledged: 80,
            primaryDurable: 200,
            now: 2600
        )
        #expect(set.members == ["c": 80])
        #expect(verdict == InSyncSet.Verdict(replicatedPosition: 80, stalled: true, unsynced: false))
        // It comes back and catches up: acknowledgements move again.
        verdict = set.update(
            standbys: [Self.standby("c", appended: 200, durable: 200, heard: 2700)],
            acknowledged: 80,
            primaryDurable: 200,
            now: 2700
        )
        #expect(verdict == InSyncSet.Verdict(replicatedPosition: 200, stalled: false, unsynced: false))
    }

    @Test func aMembersNewSessionReplacesWhatItsOldOneConfirmed() {
        var set = InSyncSet(position: 0, acknowledgement: .standby, fallback: .stall, timeoutMilliseconds: 1000, now: 0)
        _ = set.update(
            standbys: [Self.standby("b", appended: 80, durable: 80, heard: 0)],
            acknowledged: 80,
            primaryDurable: 80,
            now: 0
        )
        _ = set.update(
            standbys: [Self.standby("b", appended: 80, durable: 80, heard: 1)],
            acknowledged: 80,
            primaryDurable: 80,
            now: 1
        )
        #expect(set.members == ["b": 80])
        // Followed again holding less (its log was cut back): the gate must not trust the old 80.
        let verdict = set.update(
            standbys: [Self.standby("b", appended: 50, durable: 50, heard: 2, session: 2)],
            acknowledged: 80,
            primaryDurable: 90,
            now: 2
        )
        #expect(set.members == ["b": 50])
        #expect(verdict.replicatedPosition == 50)
    }
}
