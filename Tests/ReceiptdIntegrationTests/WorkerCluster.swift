import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore

/// Several real `receiptd` workers on this host, each with its own data directory and ordinal,
/// and the cluster description a `ReceiptsClient` needs to reach them.
final class WorkerCluster {
    let workers: [ReceiptdProcess]

    /// Starts `count` workers as ordinals 0..<count of a `count`-worker cluster.
    /// - Parameter parentDirectory: nil for a fresh data directory per worker; else worker `i`
    ///   keeps its data in `<parentDirectory>/w<i>` (made here, removed by the caller), so its
    ///   endpoints follow a pattern, as a StatefulSet's do.
    init(count: Int, parentDirectory: String? = nil) throws {
        workers = try (0..<count).map { index in
            let dataDirectory = parentDirectory.map { "\($0)/w\(index)" }
            if let dataDirectory {
                try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
            }
            return try ReceiptdProcess(
                dataDirectory: dataDirectory,
                arguments: ["--worker-index", "\(index)", "--worker-count", "\(count)"]
            )
        }
    }

    var cluster: Cluster {
        Cluster(workers: workers.map { Cluster.Worker(dataDirectory: $0.dataDirectory) })
    }

    /// A client for the whole cluster with test-sized timeouts.
    /// - Parameter adjust: Changes to the configuration beyond those.
    func client(
        source: String? = nil,
        _ adjust: (inout ReceiptsClient.Configuration) -> Void = { _ in }
    ) throws -> ReceiptsClient {
        var configuration = ReceiptsClient.Configuration(cluster: cluster, source: source)
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
