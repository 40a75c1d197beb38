/// The four endpoints of one receiptd worker, and where it binds them unless told otherwise:
/// `ipc://` sockets under its data directory.
///
/// receiptd, receiptctl, `ReceiptsClient`'s `Cluster.Worker(dataDirectory:)` and the test kit
/// all take the default names and their environment variables from here, so a tool finds the
/// daemon with no flags at all and no copy of a socket name can drift from the one bound.
public struct WorkerEndpoints: Hashable, Sendable {
    /// Acknowledged ingest (ROUTER for REQ and DEALER gateways).
    public var ingest: String
    /// Fire-and-forget ingest (SUB that gateways' PUB sockets connect to).
    public var ingestSubscribe: String
    /// Status updates (PUB).
    public var publish: String
    /// Queries (ROUTER for REQ clients).
    public var query: String

    /// The data directory used when neither a flag nor `RECEIPTD_DATA_DIR` names one.
    public static let defaultDataDirectory = "receiptd-data"

    /// The `ipc://` endpoints receiptd binds by default under its data directory.
    ///
    /// A directory holding `{index}` gives the endpoint templates of workers that keep their
    /// data in directories named by their ordinal.
    /// - Parameter dataDirectory: The worker's `--data-dir`.
    public init(dataDirectory: String) {
        ingest = "ipc://\(dataDirectory)/ingest.sock"
        ingestSubscribe = "ipc://\(dataDirectory)/ingest-sub.sock"
        publish = "ipc://\(dataDirectory)/updates.sock"
        query = "ipc://\(dataDirectory)/query.sock"
    }

    /// The endpoints as receiptd resolves them: each flag if given, else its `RECEIPTD_*`
    /// environment variable, else the default under the resolved data directory.
    /// - Parameters:
    ///   - dataDirectory: The data directory as ``resolvedDataDirectory(_:environment:)`` gives it.
    ///   - ingest: `--ingest`, if given.
    ///   - ingestSubscribe: `--ingest-sub`, if given.
    ///   - publish: `--publish`, if given.
    ///   - query: `--query`, if given.
    ///   - environment: The process environment.
    public init(
        dataDirectory: String,
        ingest: String?,
        ingestSubscribe: String?,
        publish: String?,
        query: String?,
        environment: [String: String]
    ) {
        self.init(dataDirectory: dataDirectory)
        self.ingest = ingest ?? environment["RECEIPTD_INGEST"] ?? self.ingest
        self.ingestSubscribe = ingestSubscribe ?? environment["RECEIPTD_INGEST_SUB"] ?? self.ingestSubscribe
        self.publish = publish ?? environment["RECEIPTD_PUBLISH"] ?? self.publish
        self.query = query ?? environment["RECEIPTD_QUERY"] ?? self.query
    }

    /// The data directory as receiptd resolves it: the flag if given, else `RECEIPTD_DATA_DIR`,
    /// else ``defaultDataDirectory``.
    /// - Parameters:
    ///   - flag: `--data-dir`, if given.
    ///   - environment: The process environment.
    /// - Returns: The directory.
    public static func resolvedDataDirectory(_ flag: String?, environment: [String: String]) -> String {
        flag ?? environment["RECEIPTD_DATA_DIR"] ?? defaultDataDirectory
    }
}
