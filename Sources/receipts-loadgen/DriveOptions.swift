/// How a workload is offered to a worker.
struct DriveOptions: Sendable {
    /// Acknowledged ingest (DEALER → ROUTER, reply after fsync) or fire-and-forget (PUB → SUB).
    var acknowledged = true
    /// Offered rate in events per second; nil sends flat out.
    var eventsPerSecond: Double?
    /// Acknowledged: frames in flight per gateway before it waits for a reply.
    var window = 16
    /// Run a subscriber and record event → status update latency.
    var trackLatency = false
}
