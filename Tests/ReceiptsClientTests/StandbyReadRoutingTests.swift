import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsClient

/// Where a client that prefers standbys sends its reads (deploy/REPLICATION.md section 10):
/// which queries a standby may answer, and which member of an ordinal is its standby.
struct StandbyReadRoutingTests {
    typealias Fixture = IngestSchedulerTests.Fixture

    @Test func onlyReadsOfConversationStateGoToAStandby() {
        let viewer = Viewer(user: "ann")
        let reads: [Query] = [
            .messageStatus(conversation: "c", message: "m", viewer: viewer),
            .readDetail(conversation: "c", message: "m"),
            .lastSent(conversation: "c", viewer: viewer),
            .unreadCounts(user: "ann", conversations: []),
        ]
        let others: [Query] = [
            .snapshot(conversation: "c", limit: 0), .health, .stats, .compact, .topology,
            .prepareMove(epoch: 1, from: 0, to: 1), .exportConversations(epoch: 1, destination: 1, limit: 10),
            .importConversations(epoch: 1, sender: 0, state: [], last: true),
            .releaseConversations(epoch: 1, destination: 1, conversations: ["c"]), .commitMove(epoch: 1),
        ]
        #expect(reads.map(\.isFollowerRead) == Array(repeating: true, count: reads.count))
        #expect(others.filter(\.isFollowerRead).isEmpty)
    }

    @Test func theStandbyIsTheMemberAfterThePrimaryAsFarAsTheClientKnows() {
        let configuration = ReceiptsClient.Configuration(
            cluster: Cluster(members: [
                [Fixture.member(0, of: 0), Fixture.member(1, of: 0)],
                [Fixture.member(0, of: 1)],
                [Fixture.member(0, of: 2), Fixture.member(1, of: 2), Fixture.member(2, of: 2)],
            ]),
            source: "gw"
        )
        let tracker = PrimaryTracker(configuration: configuration, statistics: ClientStatistics())
        #expect(tracker.standby(of: 0) == 1)
        #expect(tracker.standby(of: 1) == nil, "an ordinal of one member has no standby")
        #expect(tracker.standby(of: 2) == 1)
        // The primary moves: so does the standby.
        #expect(tracker.leave(0, of: 0))
        #expect(tracker.standby(of: 0) == 0)
        #expect(tracker.leave(0, of: 2))
        #expect(tracker.standby(of: 2) == 2)
    }

    @Test func theDefaultReadsFromThePrimary() {
        let configuration = ReceiptsClient.Configuration(cluster: Cluster(workers: [Fixture.member(0, of: 0)]))
        #expect(configuration.readFrom == .primary)
    }
}
