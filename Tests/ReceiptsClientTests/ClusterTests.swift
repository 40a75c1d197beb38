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
}
