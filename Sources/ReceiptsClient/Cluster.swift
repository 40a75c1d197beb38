import ReceiptsWire

/// Where a cluster's workers listen, and how many of them share the conversations.
///
/// Two numbers are kept apart. ``workerCount`` is the *routing* count: every event and query
/// goes first to the owner that `Partitioning.owner(of:workerCount:)` names for it, as the
/// workers themselves compute it. The endpoints the client may talk to can reach further: while
/// the worker count changes (SCALING.md), the new workers of a scale-up already serve the
/// conversations moved to them, and a worker that no longer owns a conversation answers
/// NOT_OWNER naming its owner, which may be an ordinal at or above the routing count. The
/// client follows such an answer whenever ``worker(_:)`` knows that ordinal's endpoints.
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
            let endpoints = WorkerEndpoints(dataDirectory: dataDirectory)
            self.init(ingest: endpoints.ingest, query: endpoints.query, publish: endpoints.publish)
        }
    }

    /// The highest ordinal a client ever talks to. A NOT_OWNER answer naming a higher one is
    /// not followed: its per-worker sockets are made for every ordinal up to the one reached,
    /// so a garbled ordinal must not make millions of them.
    public static let maxOrdinal = 1023

    /// The workers listed, indexed by ordinal: at least the routing count's, possibly more
    /// (the new workers of a scale-up the client is not routing to yet).
    public var workers: [Worker]

    /// The routing count given at `init` or set later; nil means `workers.count`.
    private var routingCount: Int?

    /// The endpoint templates of a templated cluster, which resolve any ordinal.
    private var templates: Worker?

    /// A cluster of the given workers.
    /// - Parameters:
    ///   - workers: One entry per ordinal, in order; at least `workerCount` of them.
    ///   - workerCount: How many workers share the conversations, for routing; nil for
    ///     `workers.count`. Fewer than `workers.count` lets the client reach the workers above
    ///     it (a scale-up's new ordinals) when a NOT_OWNER answer names them, before the client
    ///     is configured with the new count.
    public init(workers: [Worker], workerCount: Int? = nil) {
        self.workers = workers
        self.routingCount = workerCount
    }

    /// A cluster whose endpoints follow a pattern, as a StatefulSet's pods do.
    ///
    /// `{index}` in each template becomes the ordinal, e.g.
    /// `tcp://receiptd-{index}.receiptd:7001` for a headless Service named `receiptd`. The
    /// templates are kept, so ``worker(_:)`` resolves ordinals at and above `workerCount` too:
    /// after a scale-up the client follows NOT_OWNER answers to the new pods before it is
    /// configured with the new count.
    /// - Parameters:
    ///   - workerCount: How many workers share the conversations (the StatefulSet's `replicas`
    ///     the client routes by).
    ///   - ingest: The ingest endpoint template.
    ///   - query: The query endpoint template.
    ///   - publish: The PUB endpoint template.
    public init(workerCount: Int, ingest: String, query: String, publish: String) {
        let templates = Worker(ingest: ingest, query: query, publish: publish)
        self.templates = templates
        self.workers = (0..<max(workerCount, 0)).map { Self.resolve(templates, ordinal: $0) }
        self.routingCount = nil
    }

    /// How many workers share the conversations: the count every owner is computed with. It is
    /// `workers.count` unless given (or set) otherwise.
    public var workerCount: Int {
        get { routingCount ?? workers.count }
        set { routingCount = newValue }
    }

    /// The ordinals the client connects to from the start: those it routes to and any listed
    /// beyond them. Subscriptions listen to all of them; user-wide events go to all of them.
    public var ordinals: Range<Int> {
        0..<min(max(workers.count, workerCount, 0), Self.maxOrdinal + 1)
    }

    /// One worker's endpoints.
    /// - Parameter ordinal: The worker's ordinal.
    /// - Returns: The listed worker, or for a templated cluster the templates resolved for
    ///   `ordinal`; nil for an ordinal the cluster cannot name (negative, above ``maxOrdinal``,
    ///   or past the list of a cluster without templates).
    public func worker(_ ordinal: Int) -> Worker? {
        guard ordinal >= 0, ordinal <= Self.maxOrdinal else { return nil }
        if ordinal < workers.count { return workers[ordinal] }
        return templates.map { Self.resolve($0, ordinal: ordinal) }
    }

    private static func resolve(_ templates: Worker, ordinal: Int) -> Worker {
        let index = String(ordinal)
        return Worker(
            ingest: templates.ingest.replacingAll("{index}", with: index),
            query: templates.query.replacingAll("{index}", with: index),
            publish: templates.publish.replacingAll("{index}", with: index)
        )
    }
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
