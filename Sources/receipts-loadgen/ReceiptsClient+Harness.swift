import Logging
import ReceiptsClient
import ZeroMQ

extension ReceiptsClient {
    /// A client of one worker with the library's defaults (batching, in-flight frames, retries),
    /// for the harness's queries and the client-path rows.
    /// - Parameters:
    ///   - worker: The worker's endpoints.
    ///   - queryTimeoutMilliseconds: How long a query may wait for its reply.
    ///   - curve: CURVE keys for a worker that requires them.
    /// - Throws: `ReceiptsClientError` if the client cannot start.
    static func harness(
        worker: Cluster.Worker,
        queryTimeoutMilliseconds: Int,
        curve: CurveClientKeys?
    ) throws -> ReceiptsClient {
        var configuration = Configuration(cluster: Cluster(workers: [worker]))
        configuration.queryTimeoutMilliseconds = queryTimeoutMilliseconds
        configuration.curve = curve
        return try ReceiptsClient(configuration, logger: Logger(label: "receipts-loadgen"))
    }
}
