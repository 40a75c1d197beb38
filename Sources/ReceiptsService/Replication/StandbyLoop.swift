import Logging
import ReceiptsWire
import ZeroMQ

/// A standby's loop (deploy/REPLICATION.md, section 4.5): it owns the DEALER connected to the
/// primary's replication endpoint and drives a `StandbyReplica` from it and from the doorbell
/// (its log's durable position moved, a compaction ended, a stop was asked for).
///
/// A standby takes no ingest and answers no query yet: it keeps a copy of the ordinal that a
/// promotion can serve from.
final class StandbyLoop {
    let configuration: ServiceConfiguration
    let settings: ReplicationSettings
    let primaryEndpoint: String
    let logger: Logger
    let control: ServiceControl
    let context: ZMQContext
    let dealer: ZMQSocket
    let replica: StandbyReplica

    init(
        configuration: ServiceConfiguration,
        settings: ReplicationSettings,
        primaryEndpoint: String,
        logger: Logger,
        control: ServiceControl,
        metrics: ReplicationMetrics? = nil
    ) throws(ServiceError) {
        self.configuration = configuration
        self.settings = settings
        self.primaryEndpoint = primaryEndpoint
        self.logger = logger
        self.control = control
        do {
            context = try ZMQContext()
            dealer = try ZMQSocket(context: context, type: .dealer)
        } catch {
            throw ServiceError(.transport, "cannot create ZeroMQ sockets", cause: error)
        }
        do {
            replica = try StandbyReplica(
                configuration: configuration,
                settings: settings,
                logger: logger,
                counters: ServiceCounters(),
                metrics: metrics,
                wake: { [doorbell = control.doorbell] in doorbell.ring() }
            )
        } catch {
            dealer.close()
            context.terminate()
            throw error
        }
        control.workerCount = replica.engine.topology.workerCount
    }

    /// Follows the primary until `stop()`, then closes the log.
    func run(onReady: () -> Void) throws(ServiceError) {
        defer {
            dealer.close()
            context.terminate()
            replica.close()
        }
        do {
            try dealer.setLinger(milliseconds: 0)
            try dealer.setMaxMessageSize(Int64(ReplicationFrames.maxRecordsBytes + ReplicationFrames.maxBodyBytes))
            try dealer.connect(primaryEndpoint)
        } catch {
            throw ServiceError(.transport, "cannot connect to the primary at \(primaryEndpoint)", cause: error)
        }
        logger.info(
            "following the primary",
            metadata: [
                "endpoint.primary_replication": "\(primaryEndpoint)", "replication.member": "\(settings.member)",
                "worker.index": "\(configuration.workerIndex)",
            ]
        )
        try send([replica.start(now: ServiceClock.monotonicMilliseconds())])
        onReady()
        var poller = ZMQPoller()
        let dealerItem = poller.add(dealer)
        let doorbellItem = poller.add(fileDescriptor: control.doorbell.fileDescriptor)
        while !control.shouldLeave {
            do {
                _ = try poller.poll(timeoutMilliseconds: Int(settings.heartbeatMilliseconds))
            } catch {
                throw ServiceError(.transport, "poll failed", cause: error)
            }
            if poller.isReadable(doorbellItem) { control.doorbell.drain() }
            if poller.isReadable(dealerItem) { try receiveAll() }
            try send(replica.advance(now: ServiceClock.monotonicMilliseconds()))
            control.workerCount = replica.engine.topology.workerCount
        }
        logger.info("stopped")
    }

    /// Hands every waiting message to the replica and sends its answers.
    private func receiveAll() throws(ServiceError) {
        while true {
            let frames: [[UInt8]]?
            do {
                frames = try dealer.receiveMultipart(dontWait: true)
            } catch {
                throw ServiceError(.transport, "replication receive failed", cause: error)
            }
            guard let frames else { return }
            try send(replica.receive(frames, now: ServiceClock.monotonicMilliseconds()))
        }
    }

    /// Sends requests to the primary; one the socket cannot take now is dropped (an ack is
    /// sent again, a follow is retried after the timeout).
    private func send(_ requests: [ReplicationRequest]) throws(ServiceError) {
        for request in requests {
            do {
                _ = try dealer.send(request.encode(), dontWait: true)
            } catch {
                throw ServiceError(.transport, "replication send failed", cause: error)
            }
        }
    }
}
