import ArgumentParser
import Foundation
import ReceiptsClient
import ReceiptsWire
import ZeroMQ

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

    @Option(
        help:
            "receiptd's CURVE public key file: connect with CurveZMQ (RECEIPTD_CURVE_SERVER_PUBLIC_KEY_FILE; needs a client key)."
    )
    var curveServerKeyFile: String?

    @Option(help: "This client's CURVE secret key file (RECEIPTD_CURVE_CLIENT_SECRET_KEY_FILE).")
    var curveClientKeyFile: String?

    @Option(help: "Milliseconds to wait for a reply.")
    var timeoutMs: Int32 = 5000

    func validate() throws {
        guard timeoutMs > 0 else { throw ValidationError("--timeout-ms must be positive") }
    }

    /// The CURVE keys from the two key files (flags, else environment), or nil for plaintext.
    /// - Throws: `ValidationError` if only one file is given or a file holds no valid key.
    var curve: CurveClientKeys? {
        get throws {
            try CurveClientKeys.fromFlags(
                serverPublicKeyFile: curveServerKeyFile,
                clientSecretKeyFile: curveClientKeyFile
            )
        }
    }

    /// The data directory exactly as the daemon resolves it from the same flag and environment.
    var dataDirectory: String {
        WorkerEndpoints.resolvedDataDirectory(dataDir, environment: ProcessInfo.processInfo.environment)
    }

    /// The endpoints exactly as the daemon resolves them from the same flags and environment.
    private var resolved: WorkerEndpoints {
        WorkerEndpoints(
            dataDirectory: dataDirectory,
            ingest: ingest,
            ingestSubscribe: nil,
            publish: publish,
            query: query,
            environment: ProcessInfo.processInfo.environment
        )
    }

    var ingestEndpoint: String { resolved.ingest }
    var publishEndpoint: String { resolved.publish }
    var queryEndpoint: String { resolved.query }

    /// The one worker these endpoints name, as a cluster (receiptctl talks to one worker: its
    /// ordinal is always 0).
    var cluster: Cluster {
        let resolved = self.resolved
        return Cluster(
            workers: [
                Cluster.Worker(ingest: resolved.ingest, query: resolved.query, publish: resolved.publish)
            ]
        )
    }

    /// A client configuration for ``cluster`` whose queries wait `--timeout-ms`, with the CURVE keys if given.
    var clientConfiguration: ReceiptsClient.Configuration {
        get throws {
            var configuration = ReceiptsClient.Configuration(cluster: cluster)
            configuration.queryTimeoutMilliseconds = Int(timeoutMs)
            configuration.curve = try curve
            return configuration
        }
    }
}
