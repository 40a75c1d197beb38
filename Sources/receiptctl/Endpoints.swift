import ArgumentParser
import Foundation
import ReceiptsClient
import ReceiptsService

/// Where receiptd listens: the same defaults and environment variables as the daemon.
struct Endpoints: ParsableArguments {
    @Option(help: "receiptd's data directory, for default ipc endpoints (RECEIPTD_DATA_DIR; default ./receiptd-data).")
    var dataDir: String?

    @Option(help: "Acknowledged ingest endpoint (RECEIPTD_INGEST).")
    var ingest: String?

    @Option(help: "Status update endpoint (RECEIPTD_PUBLISH).")
    var publish: String?

    @Option(help: "Query endpoint (RECEIPTD_QUERY).")
    var query: String?

    @Option(help: "Milliseconds to wait for a reply.")
    var timeoutMs: Int32 = 5000

    func validate() throws {
        guard timeoutMs > 0 else { throw ValidationError("--timeout-ms must be positive") }
    }

    /// The endpoints exactly as the daemon resolves them from the same flags and environment.
    private var resolved: ServiceConfiguration {
        ServiceConfiguration(
            dataDirectory: dataDir,
            ingest: ingest,
            ingestSubscribe: nil,
            publish: publish,
            query: query,
            environment: ProcessInfo.processInfo.environment
        )
    }

    var ingestEndpoint: String { resolved.ingestEndpoint }
    var publishEndpoint: String { resolved.publishEndpoint }
    var queryEndpoint: String { resolved.queryEndpoint }
    var dataDirectory: String { resolved.dataDirectory }

    /// The one worker these endpoints name, as a cluster (receiptctl talks to one worker: its
    /// ordinal is always 0).
    var cluster: Cluster {
        let resolved = self.resolved
        return Cluster(
            workers: [
                Cluster.Worker(
                    ingest: resolved.ingestEndpoint,
                    query: resolved.queryEndpoint,
                    publish: resolved.publishEndpoint
                )
            ]
        )
    }

    /// A client configuration for ``cluster`` whose queries wait `--timeout-ms`.
    var clientConfiguration: ReceiptsClient.Configuration {
        var configuration = ReceiptsClient.Configuration(cluster: cluster)
        configuration.queryTimeoutMilliseconds = Int(timeoutMs)
        return configuration
    }
}
