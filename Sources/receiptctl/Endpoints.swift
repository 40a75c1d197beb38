import ArgumentParser
import Foundation
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

    private var defaults: ServiceConfiguration {
        ServiceConfiguration(dataDirectory: dataDir ?? environment["RECEIPTD_DATA_DIR"] ?? "receiptd-data")
    }

    private var environment: [String: String] { ProcessInfo.processInfo.environment }

    var ingestEndpoint: String { ingest ?? environment["RECEIPTD_INGEST"] ?? defaults.ingestEndpoint }
    var publishEndpoint: String { publish ?? environment["RECEIPTD_PUBLISH"] ?? defaults.publishEndpoint }
    var queryEndpoint: String { query ?? environment["RECEIPTD_QUERY"] ?? defaults.queryEndpoint }
    var dataDirectory: String { dataDir ?? environment["RECEIPTD_DATA_DIR"] ?? "receiptd-data" }
}
