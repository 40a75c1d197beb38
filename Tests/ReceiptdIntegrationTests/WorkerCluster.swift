import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsWire

/// Several real `receiptd` workers on this host, each with its own data directory and ordinal,
/// and the cluster description a `ReceiptsClient` needs to reach them.
final class WorkerCluster {
    let workers: [ReceiptdProcess]
    /// The directory that holds worker `i`'s data in `w<i>`, with `inOneDirectory`.
    let parentDirectory: String?

    /// Starts `slots` workers as ordinals 0..<slots of a `count`-worker cluster: ordinals at or
    /// past `count` start as a scale-up's new workers do, owning nothing until a move.
    /// - Parameters:
    ///   - slots: How many workers to start; `count` if nil.
    ///   - inOneDirectory: Worker `i` keeps its data in `w<i>` of one fresh directory (removed
    ///     with the cluster), so its endpoints follow a pattern, as a StatefulSet's do;
    ///     otherwise each worker gets a fresh directory of its own.
    init(count: Int, slots: Int? = nil, inOneDirectory: Bool = false) async throws {
        var parent: String?
        if inOneDirectory {
            parent = try TemporaryDirectory.make(prefix: "rdwc")
        }
        parentDirectory = parent
        var workers: [ReceiptdProcess] = []
        for index in 0..<(slots ?? count) {
            let dataDirectory = parent.map { "\($0)/w\(index)" }
            if let dataDirectory {
                try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
            }
            workers.append(
                try await ReceiptdProcess(
                    dataDirectory: dataDirectory,
                    arguments: ["--worker-index", "\(index)", "--worker-count", "\(count)"]
                )
            )
        }
        self.workers = workers
    }

    deinit {
        guard let parentDirectory else { return }
        for worker in workers { worker.kill9() }
        try? FileManager.default.removeItem(atPath: parentDirectory)
    }

    /// Every worker's endpoints with `{index}` for the ordinal; needs `inOneDirectory`.
    var endpointTemplates: WorkerEndpoints {
        WorkerEndpoints(dataDirectory: "\(parentDirectory ?? "")/w{index}")
    }

    /// Every worker, routed by `routingCount` (all of them if nil).
    func cluster(routingCount: Int? = nil) -> Cluster {
        Cluster(workers: workers.map { Cluster.Worker(dataDirectory: $0.dataDirectory) }, workerCount: routingCount)
    }

    var cluster: Cluster { cluster() }

    /// A client for the whole cluster with test-sized timeouts.
    /// - Parameters:
    ///   - routingCount: The worker count it routes by; every worker if nil.
    ///   - adjust: Changes to the configuration beyond those.
    func client(
        routingCount: Int? = nil,
        source: String? = nil,
        _ adjust: (inout ReceiptsClient.Configuration) -> Void = { _ in }
    ) throws -> ReceiptsClient {
        var configuration = ReceiptsClient.Configuration(cluster: cluster(routingCount: routingCount), source: source)
        configuration.acknowledgementTimeoutMilliseconds = 500
        configuration.queryTimeoutMilliseconds = 2000
        adjust(&configuration)
        return try ReceiptsClient(configuration, logger: Logger(label: "test-client"))
    }
}

/// Runs `body`, failing instead of hanging if it takes longer than `seconds`.
func within<Value: Sendable>(
    _ seconds: Double,
    _ what: String,
    _ body: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    try await withThrowingTaskGroup(of: Value?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw IntegrationError("\(what) did not finish within \(seconds) s")
        }
        return value
    }
}
