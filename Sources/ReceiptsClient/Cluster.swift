/// Where a cluster's workers listen: one ``Worker`` per ordinal, in ordinal order.
///
/// The worker count is `workers.count`; every event and query goes to the owner that
/// `Partitioning.owner(of:workerCount:)` names, as the workers themselves compute it.
public struct Cluster: Hashable, Sendable {
    /// One worker's endpoints.
    public struct Worker: Hashable, Sendable {
        /// The acknowledged ingest endpoint (ROUTER).
        public var ingest: String
        /// The query endpoint (ROUTER).
        public var query: String
        /// The status update endpoint (PUB).
        public var publish: String

        /// Creates a worker's endpoints.
        public init(ingest: String, query: String, publish: String) {
            self.ingest = ingest
            self.query = query
            self.publish = publish
        }

        /// The `ipc://` endpoints receiptd binds by default under its data directory.
        /// - Parameter dataDirectory: The worker's `--data-dir`.
        public init(dataDirectory: String) {
            self.init(
                ingest: "ipc://\(dataDirectory)/ingest.sock",
                query: "ipc://\(dataDirectory)/query.sock",
                publish: "ipc://\(dataDirectory)/updates.sock"
            )
        }
    }

    /// The workers, indexed by ordinal.
    public var workers: [Worker]

    /// A cluster of the given workers.
    /// - Parameter workers: One entry per ordinal, in order; at least one.
    public init(workers: [Worker]) {
        self.workers = workers
    }

    /// A cluster whose endpoints follow a pattern, as a StatefulSet's pods do.
    ///
    /// `{index}` in each template becomes the ordinal, e.g.
    /// `tcp://receiptd-{index}.receiptd:7001` for a headless Service named `receiptd`.
    /// - Parameters:
    ///   - workerCount: How many workers (the StatefulSet's `replicas`).
    ///   - ingest: The ingest endpoint template.
    ///   - query: The query endpoint template.
    ///   - publish: The PUB endpoint template.
    public init(workerCount: Int, ingest: String, query: String, publish: String) {
        self.workers = (0..<max(workerCount, 0)).map { index in
            let ordinal = String(index)
            return Worker(
                ingest: ingest.replacingAll("{index}", with: ordinal),
                query: query.replacingAll("{index}", with: ordinal),
                publish: publish.replacingAll("{index}", with: ordinal)
            )
        }
    }

    /// How many workers share the conversations.
    public var workerCount: Int { workers.count }
}

extension String {
    /// The string with every occurrence of `target` replaced (without Foundation).
    fileprivate func replacingAll(_ target: String, with replacement: String) -> String {
        var result = ""
        var rest = Substring(self)
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound]
            result += replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
