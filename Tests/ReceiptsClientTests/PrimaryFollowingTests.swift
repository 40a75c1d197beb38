import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsClient

/// The client's ingest following a replicated ordinal's primary (deploy/REPLICATION.md section
/// 8.2), in process: NOT_PRIMARY answers and silent members go in by hand, the frames each
/// member is sent are read back.
struct PrimaryFollowingTests {
    typealias Fixture = IngestSchedulerTests.Fixture

    private static let accepted = EventOutcome.accepted(held: false)

    /// NOT_PRIMARY naming member `member` of ordinal 0 of a fixture's cluster.
    private static func notPrimary(naming member: Int?, term: UInt64 = 2) -> ErrorReply {
        ErrorReply(
            code: .notPrimary,
            message: "a standby",
            primary: member.map { ErrorReply.Primary(member: Fixture.member($0, of: 0).member) },
            term: term
        )
    }

    /// Two members of one ordinal, three frames of two events in flight to the first.
    private static func threeFramesInFlight(
        _ configure: (inout ReceiptsClient.Configuration) -> Void = { _ in }
    ) -> (Fixture, [RecordingIngest.Frame]) {
        let fixture = Fixture(members: 2) {
            $0.maxBatchEvents = 2
            $0.maxFramesInFlight = 3
            $0.unavailableBackoffMilliseconds = 100
            $0.acknowledgementTimeoutMilliseconds = 2000
            configure(&$0)
        }
        fixture.scheduler.startSend(id: 1, events: fixture.events(8), outboxPosition: nil, now: fixture.at(0))
        fixture.scheduler.pump(now: fixture.at(0))
        return (fixture, fixture.environment.takeFrames())
    }

    @Test func notPrimaryNamingAMemberResendsEveryFrameInFlightThereInOrderWithTheSameIDs() {
        let (fixture, sent) = Self.threeFramesInFlight()
        #expect(sent.map(\.sequences) == [[1, 2], [3, 4], [5, 6]])
        #expect(sent.allSatisfy { $0.member == 0 })

        // The middle frame's answer comes first: every frame goes again, oldest first.
        fixture.refuse(sent[1], Self.notPrimary(naming: 1), at: 10)
        let resent = fixture.environment.takeFrames()
        #expect(resent.map(\.member) == [1, 1, 1])
        #expect(resent.map(\.tag) == sent.map(\.tag))
        #expect(resent.map(\.events) == sent.map(\.events), "the same event ids")
        #expect(fixture.primaries.current(of: 0) == 1)
        #expect(fixture.statistics.snapshot.primarySwitches == 1)

        // The old member's other answers are about frames sent on already: nothing moves.
        fixture.refuse(sent[0], Self.notPrimary(naming: 1), from: 0, at: 11)
        fixture.refuse(sent[2], Self.notPrimary(naming: nil), from: 0, at: 11)
        #expect(fixture.environment.takeFrames().isEmpty)

        // Newer events go after them, to the new primary.
        fixture.acknowledge(resent[0], [.duplicate, .duplicate], at: 12)
        fixture.scheduler.pump(now: fixture.at(12))
        let newer = fixture.environment.takeFrames()
        #expect(newer.map(\.sequences) == [[7, 8]])
        #expect(newer.map(\.member) == [1])
        fixture.acknowledge(resent[1], [.duplicate, Self.accepted], at: 13)
        fixture.acknowledge(resent[2], at: 13)
        fixture.acknowledge(newer[0], at: 13)
        #expect(
            fixture.environment.outcomes(1) == [.duplicate, .duplicate, .duplicate]
                + Array(repeating: Self.accepted, count: 5)
        )
    }

    @Test func notPrimaryNamingNoPrimaryAsksTheSameMemberAgainAfterThePauseUntilOneIsNamed() {
        let (fixture, sent) = Self.threeFramesInFlight()
        for frame in sent { fixture.refuse(frame, Self.notPrimary(naming: nil), at: 10) }
        fixture.scheduler.expireDeadlines(now: fixture.at(109))
        #expect(fixture.environment.takeFrames().isEmpty, "the pause is not over")

        // A pause is not silence: the frames go to the same member again, in order.
        fixture.scheduler.expireDeadlines(now: fixture.at(110))
        var again = fixture.environment.takeFrames()
        #expect(again.map(\.sequences) == [[1, 2], [3, 4], [5, 6]])
        #expect(again.allSatisfy { $0.member == 0 })
        #expect(fixture.primaries.current(of: 0) == 0)

        for frame in again { fixture.refuse(frame, Self.notPrimary(naming: nil), at: 120) }
        fixture.scheduler.expireDeadlines(now: fixture.at(220))
        again = fixture.environment.takeFrames()
        #expect(again.count == 3)
        fixture.refuse(again[0], Self.notPrimary(naming: 1, term: 3), at: 230)
        let resent = fixture.environment.takeFrames()
        #expect(resent.map(\.member) == [1, 1, 1])
        #expect(resent.map(\.sequences) == [[1, 2], [3, 4], [5, 6]])
        for frame in resent { fixture.acknowledge(frame, at: 240) }
        fixture.scheduler.pump(now: fixture.at(240))
        for frame in fixture.environment.takeFrames() { fixture.acknowledge(frame, at: 250) }
        #expect(fixture.environment.outcomes(1) == Array(repeating: Self.accepted, count: 8))
    }

    @Test func switchingIsBoundedWhenTwoMembersNameEachOther() {
        let (fixture, sent) = Self.threeFramesInFlight { $0.maxPrimarySwitches = 3 }
        var frame = sent[0]
        var switchedAt: [Int] = []
        var retried = 0
        // Each member names the other for 500 ms: three switches, then pauses on one member.
        for milliseconds in stride(from: 10, to: 500, by: 10) {
            let before = fixture.primaries.current(of: 0)
            fixture.refuse(frame, Self.notPrimary(naming: 1 - frame.member), at: milliseconds)
            fixture.scheduler.expireDeadlines(now: fixture.at(milliseconds))
            if fixture.primaries.current(of: 0) != before { switchedAt.append(milliseconds) }
            guard let next = fixture.environment.takeFrames().first(where: { $0.tag == sent[0].tag }) else {
                retried += 1
                continue
            }
            frame = next
        }
        #expect(switchedAt == [10, 20, 30])
        #expect(retried > 0)
        #expect(fixture.statistics.snapshot.primarySwitches == 3)
        #expect(fixture.environment.outcomes(1) == nil && fixture.environment.failure(1) == nil, "never failed")

        // A second after the first switch, one more is allowed.
        fixture.scheduler.expireDeadlines(now: fixture.at(1100))
        frame = fixture.environment.takeFrames().first { $0.tag == sent[0].tag } ?? frame
        fixture.refuse(frame, Self.notPrimary(naming: 1 - frame.member), at: 1100)
        #expect(fixture.statistics.snapshot.primarySwitches == 4)
    }

    @Test func aSilentMemberIsLeftForTheNextAfterTheAcknowledgementTimeout() {
        let (fixture, sent) = Self.threeFramesInFlight()
        fixture.acknowledge(sent[0], at: 5)
        fixture.scheduler.expireDeadlines(now: fixture.at(1999))
        #expect(fixture.environment.takeFrames().isEmpty)
        fixture.scheduler.expireDeadlines(now: fixture.at(2000))
        let resent = fixture.environment.takeFrames()
        #expect(resent.map(\.sequences) == [[3, 4], [5, 6]])
        #expect(resent.map(\.member) == [1, 1])
        #expect(fixture.primaries.current(of: 0) == 1)

        // The next member is silent too: back to the first, in turn.
        fixture.scheduler.expireDeadlines(now: fixture.at(4000))
        #expect(fixture.environment.takeFrames().map(\.member) == [0, 0])
        #expect(fixture.statistics.snapshot.primarySwitches == 2)
    }

    @Test func anUnreplicatedWorkerThatIsSilentGetsTheFramesAgain() {
        let fixture = Fixture { $0.acknowledgementTimeoutMilliseconds = 100 }
        fixture.scheduler.startSend(id: 1, events: fixture.events(2), outboxPosition: nil, now: fixture.at(0))
        fixture.scheduler.pump(now: fixture.at(0))
        let sent = fixture.environment.takeFrames()
        fixture.scheduler.expireDeadlines(now: fixture.at(100))
        #expect(fixture.environment.takeFrames() == sent)
        // NOT_PRIMARY from the only member known (one configured without its members) waits.
        fixture.refuse(sent[0], Self.notPrimary(naming: 1), at: 110)
        fixture.scheduler.expireDeadlines(now: fixture.at(209))
        #expect(fixture.environment.takeFrames().isEmpty)
        fixture.scheduler.expireDeadlines(now: fixture.at(210))
        #expect(fixture.environment.takeFrames() == sent)
        #expect(fixture.statistics.snapshot.primarySwitches == 0)
    }

    @Test func aPrimaryLearnedFromAQueryMovesTheFramesInFlightBeforeAnythingNewer() {
        let (fixture, sent) = Self.threeFramesInFlight()
        // The loop's query path tells the shared tracker; the scheduler follows at its next pump.
        #expect(
            fixture.primaries.notPrimary(Self.notPrimary(naming: 1).primary, ordinal: 0, member: 0, now: fixture.at(5))
                == .switchMember(to: 1)
        )
        fixture.acknowledge(sent[0], at: 5)
        fixture.scheduler.pump(now: fixture.at(6))
        let frames = fixture.environment.takeFrames()
        #expect(frames.map(\.sequences) == [[3, 4], [5, 6], [7, 8]])
        #expect(frames.map(\.member) == [1, 1, 1])
    }

    @Test func theTrackerMatchesTheNamedPrimaryByNameOrByEndpoints() {
        let unnamed = Cluster.Worker(ingest: "tcp://b:7001", query: "tcp://b:7004", publish: "tcp://b:7003")
        let configuration = ReceiptsClient.Configuration(
            cluster: Cluster(members: [[Fixture.member(0, of: 0), unnamed]]),
            source: "gw"
        )
        let tracker = PrimaryTracker(configuration: configuration, statistics: ClientStatistics())
        let now = ContinuousClock.now
        let byEndpoint = ErrorReply.Primary(member: "b-0", ingest: "tcp://b:7001")
        #expect(tracker.notPrimary(byEndpoint, ordinal: 0, member: 0, now: now) == .switchMember(to: 1))
        let byName = ErrorReply.Primary(member: "m0-0", ingest: "tcp://elsewhere:1")
        #expect(tracker.notPrimary(byName, ordinal: 0, member: 1, now: now) == .switchMember(to: 0))
        // An answer of a member left already points to the current one and changes nothing.
        #expect(tracker.notPrimary(byEndpoint, ordinal: 0, member: 1, now: now) == .switchMember(to: 0))
        // A primary the cluster does not list is waited for.
        let stranger = ErrorReply.Primary(member: "z-0", ingest: "tcp://z:7001")
        #expect(tracker.notPrimary(stranger, ordinal: 0, member: 0, now: now) == .retry(afterMilliseconds: 100))
        #expect(tracker.current(of: 0) == 0)
        #expect(!tracker.leave(1, of: 0), "a member left already")
        #expect(tracker.leave(0, of: 0))
        #expect(tracker.current(of: 0) == 1)
        #expect(!tracker.leave(0, of: 7), "an ordinal the cluster cannot name")
    }
}
