import Logging
import ReceiptsReplication
import ReceiptsWire
import ZeroMQ

/// A standby's loop (deploy/REPLICATION.md, section 4.5): it owns the DEALER connected to the
/// primary's replication endpoint and drives a `StandbyReplica` from it and from the doorbell
/// (its log's durable position moved, a compaction ended, a stop was asked for).
///
/// A standby takes no ingest: it binds the worker's ingest and query endpoints and answers every
/// ingest frame with `NOT_PRIMARY`, naming the primary it follows (section 8.1), so that a client
/// that reached it learns where to go; queries as `StandbyQueries` says (follower reads,
/// section 10).
final class StandbyLoop {
    let configuration: ServiceConfiguration
    let settings: ReplicationSettings
    let primaryEndpoint: String
    let logger: Logger
    let control: ServiceControl
    let context: ZMQContext
    let dealer: ZMQSocket
    /// The worker's ingest and query endpoints, answered by `clients`.
    let ingest: ZMQSocket
    let queries: ZMQSocket
    let replica: StandbyReplica
    /// How clients are answered: `NOT_PRIMARY` naming the primary, health, follower reads.
    let clients: StandbyQueries

    init(
        configuration: ServiceConfiguration,
        settings: ReplicationSettings,
        primaryEndpoint: String,
        primary: PrimaryRecord? = nil,
        logger: Logger,
        control: ServiceControl,
        metrics: ReplicationMetrics? = nil
    ) throws(ServiceError) {
        clients = StandbyQueries(
            configuration: configuration,
            settings: settings,
            primary: primary,
            startedMonotonic: ServiceClock.monotonicMilliseconds()
        )
        self.configuration = configuration
        self.settings = settings
        self.primaryEndpoint = primaryEndpoint
        self.logger = logger
        self.control = control
        do {
            context = try ZMQContext()
            dealer = try ZMQSocket(context: context, type: .dealer)
            ingest = try ZMQSocket(context: context, type: .router)
            queries = try ZMQSocket(context: context, type: .router)
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
            for socket in [dealer, ingest, queries] { socket.close() }
            context.terminate()
            throw error
        }
        control.workerCount = replica.engine.topology.workerCount
    }

    /// Follows the primary until `stop()` or a leave, then closes the log. With
    /// `settings.takeoverMilliseconds`, it also ends when the primary was silent that long (no
    /// message of an open session after the first, counted from its return after it was itself
    /// held up at the earliest) while `mayTakeOver` says the member may take over (section 6.5).
    ///
    /// - Returns: Whether it ended because the primary went silent.
    @discardableResult
    func run(onReady: () -> Void, mayTakeOver: () -> Bool = { false }) throws(ServiceError) -> Bool {
        defer {
            for socket in [dealer, ingest, queries] { socket.close() }
            context.terminate()
            replica.close()
        }
        // With CURVE configured the client endpoints stay unbound (closed, as a member between
        // roles): the standby does not yet secure them with the workers' key and allowlists, and
        // must not answer anyone in plaintext. Clients that list the ordinal's members leave a
        // silent member for the next.
        let servesClients = configuration.curve == nil
        do {
            for (socket, endpoint) in [(ingest, configuration.ingestEndpoint), (queries, configuration.queryEndpoint)]
            where servesClients {
                try socket.setLinger(milliseconds: 0)
                try socket.setMaxMessageSize(configuration.transportMaxMessageBytes)
                try socket.bind(endpoint)
            }
        } catch {
            throw ServiceError(.transport, "cannot bind the client endpoints", cause: error)
        }
        do {
            try dealer.setLinger(milliseconds: 0)
            try dealer.setMaxMessageSize(Int64(ReplicationFrames.maxRecordsBytes + ReplicationFrames.maxBodyBytes))
            if let curve = configuration.curve {
                // The members share the workers' key pair: the primary is a server with it, and
                // admits only it as a client on the replication endpoint.
                let publicKey = try curve.secretKey.publicKey()
                try dealer.setCurveClient(
                    CurveClientKeys(serverPublicKey: publicKey, publicKey: publicKey, secretKey: curve.secretKey)
                )
            }
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
        let started = ServiceClock.monotonicMilliseconds()
        try send([replica.start(now: started)])
        // The loop's last turn, and when it last came back from being held up itself.
        var (lastTurn, resumed) = (started, Int64.min)
        onReady()
        var poller = ZMQPoller()
        let dealerItem = poller.add(dealer)
        let doorbellItem = poller.add(fileDescriptor: control.doorbell.fileDescriptor)
        let ingestItem = servesClients ? poller.add(ingest) : nil
        let queriesItem = servesClients ? poller.add(queries) : nil
        while !control.shouldLeave {
            do {
                _ = try poller.poll(timeoutMilliseconds: Int(settings.heartbeatMilliseconds))
            } catch {
                throw ServiceError(.transport, "poll failed", cause: error)
            }
            if poller.isReadable(doorbellItem) { control.doorbell.drain() }
            if poller.isReadable(dealerItem) { try receiveAll() }
            if let ingestItem, poller.isReadable(ingestItem) { try answer(ingest, ingest: true) }
            if let queriesItem, poller.isReadable(queriesItem) { try answer(queries, ingest: false) }
            let now = ServiceClock.monotonicMilliseconds()
            try send(replica.advance(now: now))
            control.workerCount = replica.engine.topology.workerCount
            // Silence counts only while this loop ran: one that was itself stopped or held up
            // (SIGSTOP, a slow disk, no free core) for half the takeover time starts counting
            // again, since the primary's messages of that time may still be on their way in
            // (libzmq's I/O thread hands them over after the loop has looked).
            // A primary never heard from in this loop (still recovering its log after its
            // campaign, say) is left to its lease: only one that went silent is taken over.
            if now - lastTurn > settings.takeoverMilliseconds / 2 { resumed = now }
            lastTurn = now
            if settings.takeoverMilliseconds > 0, let lastHeard = replica.lastHeardFromPrimary,
                now - max(lastHeard, resumed) >= settings.takeoverMilliseconds, mayTakeOver()
            {
                let heard = max(lastHeard, resumed)
                logger.warning(
                    "the primary is silent; taking over",
                    metadata: ["replication.silent_ms": "\(now - heard)"]
                )
                return true
            }
        }
        logger.info("stopped")
        return false
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

    /// Answers what clients sent: ingest frames `NOT_PRIMARY` naming the primary (nothing of
    /// them is applied), queries as `StandbyQueries` says.
    private func answer(_ socket: ZMQSocket, ingest isIngest: Bool) throws(ServiceError) {
        for _ in 0..<ServiceLoop.framesPerTurn {
            let received: [[UInt8]]??
            do {
                received = try socket.receiveMultipart(dontWait: true) { frames -> [[UInt8]]? in
                    guard let (envelope, body) = RequestEnvelope.split(frames) else { return nil }
                    if isIngest {
                        return envelope.reply(IngestReply(results: [], error: clients.notPrimary(replica)).encode())
                    }
                    return envelope.reply(
                        clients.reply(to: body, replica: replica, now: ServiceClock.monotonicMilliseconds())
                    )
                }
            } catch {
                throw ServiceError(.transport, "client receive failed", cause: error)
            }
            // Nothing waiting; or a message without an envelope, which cannot be answered.
            guard let received else { return }
            guard let reply = received else { continue }
            _ = try? socket.send(reply, dontWait: true)
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
