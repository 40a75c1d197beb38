/// One of the daemon's counters, declared once: the dotted name the stats query and
/// `receiptctl stats` show, and the Prometheus family and dimensions `/metrics` exports it
/// under. Code counts through these ids, so a misspelt counter does not compile and the two
/// names cannot drift apart.
///
/// A counter may have a label (a reason, an endpoint, a kind): each label is its own value in
/// the stats query and its own series in Prometheus. A family always gets the same dimension
/// names (Prometheus requires it), so an event outcome without a reason has `reason=""`.
struct CounterID: Sendable {
    /// The dotted name, as the stats query reports it.
    let name: String
    /// The exported family.
    let family: MetricCatalog.Family
    /// The exported dimensions for a label.
    let dimensions: @Sendable (_ label: String) -> [(String, String)]

    private init(
        _ name: String,
        _ family: MetricCatalog.Family,
        dimensions: @escaping @Sendable (_ label: String) -> [(String, String)] = { _ in [] }
    ) {
        self.name = name
        self.family = family
        self.dimensions = dimensions
    }

    /// A counter whose label is exported as the one dimension `dimension`.
    private init(_ name: String, _ family: MetricCatalog.Family, labelledAs dimension: String) {
        self.init(name, family) { [(dimension, $0)] }
    }

    static let eventsAccepted = CounterID("receiptd.events.accepted", MetricCatalog.events) { _ in
        [("outcome", "accepted"), ("reason", "")]
    }
    static let eventsDuplicate = CounterID("receiptd.events.duplicate", MetricCatalog.events) { _ in
        [("outcome", "duplicate"), ("reason", "")]
    }
    /// Labelled by the reject reason.
    static let eventsRejected = CounterID("receiptd.events.rejected", MetricCatalog.events) {
        [("outcome", "rejected"), ("reason", $0)]
    }
    static let eventsHeld = CounterID("receiptd.events.held", MetricCatalog.eventsHeld)
    /// Labelled by the endpoint: `ingest`, `ingest_subscribe` (exported as `ingest_sub`), `query`.
    static let framesReceived = CounterID("receiptd.frames.received", MetricCatalog.frames) {
        [("endpoint", $0 == "ingest_subscribe" ? "ingest_sub" : $0)]
    }
    /// Labelled by the error code.
    static let framesInvalid = CounterID("receiptd.frames.invalid", MetricCatalog.framesInvalid, labelledAs: "kind")
    /// Labelled by the limit.
    static let limitsRefused = CounterID("receiptd.limits.refused", MetricCatalog.limitRefusals, labelledAs: "limit")
    static let updatesPublished = CounterID("receiptd.updates.published", MetricCatalog.updatesPublished)
    static let readStatesPublished = CounterID("receiptd.read_states.published", MetricCatalog.readStatesPublished)
    /// Status and read-state updates the full publishing queue turned away (`PublishingThread`).
    static let updatesDropped = CounterID("receiptd.updates.dropped", MetricCatalog.updatesDropped)
    /// Labelled by the reason: `unroutable`, `shutdown`.
    static let repliesDropped = CounterID(
        "receiptd.replies.dropped",
        MetricCatalog.repliesDropped,
        labelledAs: "reason"
    )
    static let repliesHeld = CounterID("receiptd.replies.held", MetricCatalog.repliesHeld)
    /// Labelled by the endpoint.
    static let requestsDiscarded = CounterID(
        "receiptd.requests.discarded",
        MetricCatalog.requestsDiscarded,
        labelledAs: "endpoint"
    )
    /// Labelled by the endpoint.
    static let connectionsClosed = CounterID(
        "receiptd.connections.closed",
        MetricCatalog.connectionsClosed,
        labelledAs: "endpoint"
    )
    /// Labelled by the query's kind.
    static let replicationRefusals = CounterID("receiptd.replication.refused_frames", MetricCatalog.replicationRefusals)
    static let queriesServed = CounterID("receiptd.queries.served", MetricCatalog.queries, labelledAs: "kind")
    static let compactions = CounterID("receiptd.compactions", MetricCatalog.compactions) { _ in [("result", "ok")] }
    static let compactionsFailed = CounterID("receiptd.compactions.failed", MetricCatalog.compactions) { _ in
        [("result", "failed")]
    }
    static let messagesExpired = CounterID("receiptd.messages.expired", MetricCatalog.messagesExpired)
    static let logTruncatedBytes = CounterID("receiptd.log.truncated_bytes", MetricCatalog.recoveryTruncatedBytes)
    static let logDroppedRecords = CounterID("receiptd.log.dropped_records", MetricCatalog.recoveryDroppedRecords)
    static let fsyncErrors = CounterID("receiptd.log.fsync_errors", MetricCatalog.fsyncErrors)
    /// Labelled by the endpoint.
    static let authRefused = CounterID("receiptd.auth.refused", MetricCatalog.handshakesRefused) {
        [("endpoint", $0), ("reason", "unlisted_key")]
    }
    /// Labelled by the endpoint.
    static let authHandshakeFailures = CounterID("receiptd.auth.handshake_failures", MetricCatalog.handshakesRefused) {
        [("endpoint", $0), ("reason", "handshake_failed")]
    }
    /// Labelled by the query's kind.
    static let authDenied = CounterID("receiptd.auth.denied", MetricCatalog.requestsDenied, labelledAs: "kind")
    static let keyReloads = CounterID("receiptd.auth.reloads", MetricCatalog.keyReloads) { _ in [("result", "ok")] }
    static let keyReloadsFailed = CounterID("receiptd.auth.reloads.failed", MetricCatalog.keyReloads) { _ in
        [("result", "failed")]
    }
    /// Labelled by the step.
    static let moveSteps = CounterID("receiptd.moves.steps", MetricCatalog.moveSteps, labelledAs: "step")
    /// Labelled by the reason.
    static let moveRefusals = CounterID("receiptd.moves.refused", MetricCatalog.moveRefusals, labelledAs: "reason")
}
