import ReceiptsCore
import Testing

@testable import ReceiptsClient

/// A cluster's routing count apart from the endpoints the client can reach (a worker count
/// change, SCALING.md).
struct ClusterTests {
    private static func worker(_ ordinal: Int) -> Cluster.Worker {
        Cluster.Worker(dataDirectory: "/tmp/worker-\(ordinal)")
    }

    @Test func theRoutingCountDefaultsToTheWorkersListed() {
        let cluster = Cluster(workers: (0..<3).map(Self.worker))
        #expect(cluster.workerCount == 3)
        #expect(cluster.ordinals == 0..<3)
        #expect(cluster.worker(2) == Self.worker(2))
        #expect(cluster.worker(3) == nil)
        #expect(cluster.worker(-1) == nil)
    }

    @Test func aRoutingCountBelowTheListReachesTheWorkersAboveIt() {
        let cluster = Cluster(workers: (0..<3).map(Self.worker), workerCount: 2)
        #expect(cluster.workerCount == 2)
        #expect(cluster.ordinals == 0..<3)
        #expect(cluster.worker(2) == Self.worker(2), "a scale-up's new worker")
        #expect(cluster.worker(3) == nil)
        // Owners are computed with the routing count, never with the list's length.
        for conversation in (0..<50).map({ "c\($0)" }) {
            #expect(
                Partitioning.owner(of: conversation, workerCount: cluster.workerCount)
                    == Partitioning.owner(of: conversation, workerCount: 2)
            )
        }
    }

    @Test func settingTheRoutingCountKeepsTheList() {
        var cluster = Cluster(workers: (0..<3).map(Self.worker))
        cluster.workerCount = 2
        #expect(cluster.workers.count == 3)
        #expect(cluster.ordinals == 0..<3)
        #expect(cluster != Cluster(workers: (0..<3).map(Self.worker)))
    }

    @Test func aTemplatedClusterResolvesOrdinalsBeyondItsCount() {
        let cluster = Cluster(
            workerCount: 2,
            ingest: "tcp://receiptd-{index}.receiptd:7001",
            query: "tcp://receiptd-{index}.receiptd:7004",
            publish: "tcp://receiptd-{index}.receiptd:7003"
        )
        #expect(cluster.workerCount == 2)
        #expect(cluster.ordinals == 0..<2)
        #expect(cluster.workers.count == 2)
        #expect(
            cluster.worker(5)
                == Cluster.Worker(
                    ingest: "tcp://receiptd-5.receiptd:7001",
                    query: "tcp://receiptd-5.receiptd:7004",
                    publish: "tcp://receiptd-5.receiptd:7003"
                )
        )
        #expect(cluster.worker(Cluster.maxOrdinal) != nil)
        #expect(cluster.worker(Cluster.maxOrdinal + 1) == nil)
    }

    @Test(arguments: [0, 4])
    func aRoutingCountTheListCannotServeIsRefused(workerCount: Int) {
        var configuration = ReceiptsClient.Configuration(
            cluster: Cluster(workers: (0..<3).map(Self.worker), workerCount: workerCount)
        )
        #expect(throws: ReceiptsClientError.self) { try configuration.validate() }
        configuration.cluster.workerCount = 3
        #expect(throws: Never.self) { try configuration.validate() }
    }

    @Test func negativeBackoffsAndRedirectsAreRefused() {
        var configuration = ReceiptsClient.Configuration(cluster: Cluster(workers: [Self.worker(0)]))
        #expect(configuration.movingBackoffMilliseconds == 50)
        #expect(configuration.maxRedirects == 4)
        configuration.movingBackoffMilliseconds = -1
        #expect(throws: ReceiptsClientError.self) { try configuration.validate() }
        configuration.movingBackoffMilliseconds = 0
        configuration.maxRedirects = -1
        #expect(throws: ReceiptsClientError.self) { try configuration.validate() }
    }

    @Test func aClusterWithoutMembersHasOneUnnamedMemberPerOrdinal() {
        let cluster = Cluster(workers: (0..<2).map(Self.worker))
        #expect(cluster.members == [[Self.worker(0)], [Self.worker(1)]])
        #expect(cluster.members(of: 1) == [Self.worker(1)])
        #expect(cluster.members(of: 2).isEmpty)
        #expect(Self.worker(0).member.isEmpty)
    }

    @Test func replicatedOrdinalsListTheirMembersAndTheFirstIsTheWorker() {
        let alpha = Cluster.Worker(dataDirectory: "/tmp/alpha", member: "alpha-0")
        let beta = Cluster.Worker(dataDirectory: "/tmp/beta", member: "beta-0")
        var cluster = Cluster(members: [[alpha, beta]])
        #expect(cluster.workerCount == 1)
        #expect(cluster.ordinals == 0..<1)
        #expect(cluster.worker(0) == alpha)
        #expect(cluster.members(of: 0) == [alpha, beta])
        #expect(cluster.workers == [alpha])
        cluster.workers = [beta]
        #expect(cluster.members == [[beta]], "setting the workers lists one member each")
    }

    @Test func aTemplatedReplicatedClusterNamesEachMemberAfterItsSetAndOrdinal() {
        let cluster = Cluster(
            workerCount: 2,
            members: ["receiptd", "receiptd-b"],
            ingest: "tcp://{member}-{index}.receiptd:7001",
            query: "tcp://{member}-{index}.receiptd:7004",
            publish: "tcp://{member}-{index}.receiptd:7003"
        )
        #expect(cluster.workerCount == 2)
        #expect(cluster.members(of: 3).map(\.member) == ["receiptd-3", "receiptd-b-3"])
        #expect(
            cluster.members(of: 3).map(\.ingest) == [
                "tcp://receiptd-3.receiptd:7001", "tcp://receiptd-b-3.receiptd:7001",
            ]
        )
        #expect(
            cluster.members(of: 0).map(\.publish) == [
                "tcp://receiptd-0.receiptd:7003", "tcp://receiptd-b-0.receiptd:7003",
            ]
        )
        #expect(cluster.worker(1)?.member == "receiptd-1")
        #expect(cluster.members(of: Cluster.maxOrdinal + 1).isEmpty)
    }

    @Test func aMemberIsTheNamedPrimaryByNameElseByEndpoint() {
        let named = Cluster.Worker(ingest: "tcp://a:1", query: "tcp://a:2", publish: "tcp://a:3", member: "a-0")
        #expect(named.isPrimary(.init(member: "a-0")))
        #expect(!named.isPrimary(.init(member: "b-0", ingest: "tcp://a:1")), "a name decides when both have one")
        let unnamed = Cluster.Worker(ingest: "tcp://a:1", query: "tcp://a:2", publish: "tcp://a:3")
        #expect(unnamed.isPrimary(.init(member: "a-0", ingest: "tcp://a:1")))
        #expect(unnamed.isPrimary(.init(member: "a-0", query: "tcp://a:2")))
        #expect(!unnamed.isPrimary(.init(member: "a-0")), "no endpoint to match")
    }

    @Test func anOrdinalWithoutMembersAndASwitchLimitBelowOneAreRefused() {
        var configuration = ReceiptsClient.Configuration(cluster: Cluster(members: [[Self.worker(0)], []]))
        #expect(throws: ReceiptsClientError.self) { try configuration.validate() }
        configuration.cluster = Cluster(members: [[Self.worker(0), Self.worker(1)]])
        #expect(configuration.maxPrimarySwitches == 8)
        #expect(throws: Never.self) { try configuration.validate() }
        configuration.maxPrimarySwitches = 0
        #expect(throws: ReceiptsClientError.self) { try configuration.validate() }
    }
}
