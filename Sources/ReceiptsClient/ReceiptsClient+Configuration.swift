public import ZeroMQ

extension ReceiptsClient {
    /// How a client routes, batches, retries and where it keeps its outbox.
    ///
    /// The batching settings mean what a Kafka producer's do: a frame leaves when it holds
    /// ``maxBatchEvents`` events or its first event has waited ``lingerMilliseconds``, with at
    /// most ``maxFramesInFlight`` unacknowledged frames per worker.
    public struct Configuration: Sendable {
        /// The workers.
        public var cluster: Cluster
        /// The event source id: with ``firstSequence``, each event's id. It must be stable for
        /// as long as its sequences are (receiptd de-duplicates by source and sequence), and
        /// unique among gateways. The default is random per client, which is right when no
        /// sequence is persisted.
        public var source: String
        /// The sequence of the first event this client numbers; persist ``ReceiptsClient/nextSequence``
        /// and pass it back here after a restart that keeps ``source``. With an outbox, the
        /// outbox keeps it and this is only a lower bound.
        public var firstSequence: UInt64 = 1
        /// How long a frame waits for more events before it leaves (Kafka's `linger.ms`);
        /// 0 sends what has been queued at once, which still batches concurrent callers while
        /// frames are in flight.
        public var lingerMilliseconds: Int = 0
        /// The most events in one frame (Kafka's `batch.size`, in events).
        public var maxBatchEvents: Int = 1000
        /// The most unacknowledged frames per worker. With more than one, a frame re-sent after
        /// a worker crash may be applied after a later frame: events are never lost or applied
        /// twice, but messages sent in such a window may be ordered differently than sent. Set
        /// 1 for strict order at the price of throughput.
        public var maxFramesInFlight: Int = 8
        /// The most events queued but not yet in a frame, over all workers; further `send`
        /// calls wait (backpressure), nothing is dropped.
        public var maxQueuedEvents: Int = 100_000
        /// How long a frame waits for its acknowledgement before it is re-sent, with the same
        /// event ids (a worker that restarted lost it; one that was only slow answers
        /// `duplicate` for events already applied).
        public var acknowledgementTimeoutMilliseconds: Int = 2000
        /// How long to wait before re-sending a frame a worker answered `UNAVAILABLE`, and
        /// before asking a typed query or a snapshot repair again after an `UNAVAILABLE` reply
        /// (a conversation frozen while it moves between workers is answered so).
        public var unavailableBackoffMilliseconds: Int = 100
        /// How long to wait before sending an event again that a worker rejected as `moving`
        /// (its conversation is being copied to another worker, SCALING.md). The same event,
        /// with the same id, goes to the same worker again after this pause, for as long as it
        /// takes: `moving` alone never fails a send.
        public var movingBackoffMilliseconds: Int = 50
        /// How many NOT_OWNER answers an event or a query follows to the owner they name
        /// before the answer is taken as it is. During a worker count change a chain such as
        /// old owner, new owner, moving, old owner again is possible, so more than one.
        public var maxRedirects: Int = 4
        /// How often per second the client may switch a replicated ordinal to the member a
        /// NOT_PRIMARY answer names (deploy/REPLICATION.md section 8.2). Past it, it waits
        /// ``unavailableBackoffMilliseconds`` and asks the same member again, so two members
        /// naming each other (an election seen at different times) cannot bounce it forever.
        /// Switches do not count against ``maxRedirects``.
        public var maxPrimarySwitches: Int = 8
        /// Whether queries about conversations may be answered by a standby of a replicated
        /// ordinal (``ReadPreference/standbyPreferred``) or go to the primary (the default).
        public var readFrom = ReadPreference.primary
        /// How long a query waits for its reply before it fails with ``ReceiptsClientError/Code/timeout``.
        public var queryTimeoutMilliseconds: Int = 5000
        /// The workers' anti-replay window per source (`EngineConfiguration.duplicateWindow`,
        /// 4096 in receiptd). A re-sent event older than the newest one a worker has seen from the same
        /// source by this much would be rejected as `outsideReplayWindow` (the worker cannot tell
        /// whether it applied it), so the client never has events this far apart in flight to
        /// one worker.
        public var replayWindow: UInt64 = 4096
        /// Updates a subscription buffers for a slow consumer. Past that, updates are not queued
        /// but their conversations are repaired from a snapshot once the consumer has room: it
        /// sees the newest statuses, coalesced, never an older one after a newer one.
        public var subscriptionBuffer: Int = 10_000
        /// For a one-conversation subscription, a second snapshot this long after subscribing
        /// repairs updates that a new SUB socket missed before the publisher attached it
        /// (libzmq's slow joiner) even if the conversation publishes nothing more.
        public var subscriptionSettleMilliseconds: Int = 300
        /// A directory for the file-backed outbox, or nil for none. With one, ``ReceiptsClient/enqueue(_:)``
        /// returns once its events are fsynced there, and a client started again on the same
        /// directory re-sends whatever was not acknowledged.
        public var outboxDirectory: String?
        /// CurveZMQ keys for workers that require CURVE (their public key and this client's
        /// pair, e.g. from ``ZeroMQ/CurveClientKeys/init(serverPublicKeyFile:secretKeyFile:)``);
        /// nil connects in plaintext. The client connects to a worker's ingest endpoint at its
        /// first send and to its query endpoint at its first query, so a gateway's key needs
        /// only the gateway role unless it also queries. A key the workers do not list for an
        /// endpoint is refused at the handshake, and libzmq does not retry a refused handshake:
        /// sends then wait and queries time out until the client is made again.
        public var curve: CurveClientKeys?

        /// A configuration with the defaults above.
        /// - Parameters:
        ///   - cluster: The workers.
        ///   - source: The event source id; nil for a random one (`client-` and 16 hex digits).
        public init(cluster: Cluster, source: String? = nil) {
            self.cluster = cluster
            self.source = source ?? "client-" + String(UInt64.random(in: 1...UInt64.max), radix: 16)
        }

        /// Makes a socket a CURVE client when the configuration has keys; call before `connect`.
        func secure(_ socket: ZMQSocket) throws(ZMQError) {
            if let curve { try socket.setCurveClient(curve) }
        }

        /// Checks the settings that cannot work.
        func validate() throws(ReceiptsClientError) {
            func require(_ condition: Bool, _ message: String) throws(ReceiptsClientError) {
                if !condition { throw ReceiptsClientError(.invalidArgument, message) }
            }
            try require(!cluster.members.isEmpty, "the cluster needs at least one worker")
            try require(cluster.members.allSatisfy { !$0.isEmpty }, "every ordinal listed needs at least one member")
            try require(
                cluster.workerCount >= 1 && cluster.workerCount <= Cluster.maxOrdinal + 1,
                "the cluster's workerCount must be in 1...\(Cluster.maxOrdinal + 1)"
            )
            try require(
                (0..<cluster.workerCount).allSatisfy { cluster.worker($0) != nil },
                "the cluster must name the endpoints of every ordinal below its workerCount"
            )
            try require(!source.isEmpty, "the event source id must not be empty")
            try require(firstSequence >= 1, "sequences start at 1")
            try require(lingerMilliseconds >= 0, "lingerMilliseconds must not be negative")
            try require(maxBatchEvents >= 1, "maxBatchEvents must be at least 1")
            try require(maxFramesInFlight >= 1, "maxFramesInFlight must be at least 1")
            try require(maxQueuedEvents >= 1, "maxQueuedEvents must be at least 1")
            try require(unavailableBackoffMilliseconds >= 0, "unavailableBackoffMilliseconds must not be negative")
            try require(movingBackoffMilliseconds >= 0, "movingBackoffMilliseconds must not be negative")
            try require(maxRedirects >= 0, "maxRedirects must not be negative")
            try require(maxPrimarySwitches >= 1, "maxPrimarySwitches must be at least 1")
            try require(acknowledgementTimeoutMilliseconds >= 1, "acknowledgementTimeoutMilliseconds must be positive")
            try require(queryTimeoutMilliseconds >= 1, "queryTimeoutMilliseconds must be positive")
            try require(replayWindow >= 2, "replayWindow must be at least 2")
            try require(subscriptionBuffer >= 1, "subscriptionBuffer must be at least 1")
        }
    }
}
