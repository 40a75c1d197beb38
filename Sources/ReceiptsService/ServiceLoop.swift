import Foundation
import Logging
import ReceiptsReplication
import ReceiptsWire
import ZeroMQ

/// The worker's single-threaded loop: it owns the sockets, polls them and the doorbell, and
/// hands every received message to the `ReceiptPipeline`, which owns the engine and the log
/// and answers through the same sockets (`SocketSink`).
final class ServiceLoop {
    /// Messages taken from one socket before the loop looks at the others again.
    static let framesPerTurn = 512

    let configuration: ServiceConfiguration
    let logger: Logger
    let control: ServiceControl
    let context: ZMQContext
    let ingest: ZMQSocket
    let ingestSubscriber: ZMQSocket
    let publisher: ZMQSocket
    let queries: ZMQSocket
    /// Encodes and sends the status updates on `publisher`, once it is bound.
    let publishing: PublishingThread
    /// The ZAP handler, with CURVE on.
    let authenticator: Authenticator?
    /// Disconnections and failed handshakes, per endpoint.
    let monitors: ConnectionMonitors
    let pipeline: ReceiptPipeline
    /// The replication endpoint and its thread, on a primary (deploy/REPLICATION.md, section 4).
    private var shipping: (socket: ZMQSocket, thread: ShippingThread)?
    /// Rung with the worker's doorbell, for the shipping thread, on a primary.
    private let shippingDoorbell: Doorbell?
    /// What acknowledgements wait for, on a primary under `--replication-ack standby`.
    private let gate: ReplicationGate?

    /// The term this member won, when it serves as an elected primary.
    private let primaryTerm: PrimaryTerm?
    /// The replication metrics, on a replicated member.
    private let replicationMetrics: ReplicationMetrics?

    /// - Parameters:
    ///   - primaryTerm: The term won, for an elected primary: it is started in the log before
    ///     anything is served.
    ///   - replicationMetrics: Where a replicated primary's shipper reports.
    init(
        configuration: ServiceConfiguration,
        logger: Logger,
        control: ServiceControl,
        primaryTerm: PrimaryTerm? = nil,
        replicationMetrics: ReplicationMetrics? = nil
    ) throws(ServiceError) {
        self.primaryTerm = primaryTerm
        self.replicationMetrics = replicationMetrics
        self.configuration = configuration
        self.logger = logger
        self.control = control
        let counters = ServiceCounters()
        // Registered up front so that they are exported (and alertable) at 0.
        for endpoint in ServiceEndpoint.allCases {
            _ = counters.handle(.authRefused, label: endpoint.rawValue)
            _ = counters.handle(.authHandshakeFailures, label: endpoint.rawValue)
        }
        for id in [CounterID.keyReloads, .keyReloadsFailed] {
            _ = counters.handle(id)
        }
        do {
            context = try ZMQContext()
            ingest = try ZMQSocket(context: context, type: .router)
            ingestSubscriber = try ZMQSocket(context: context, type: .sub)
            // XPUB: a PUB that also tells which topics its subscribers follow (FollowedTopicsSink),
            // each subscriber's (verbose), so that every device following a user is announced to.
            publisher = try ZMQSocket(context: context, type: .xpub)
            try publisher.setXPubVerbose(true)
            queries = try ZMQSocket(context: context, type: .router)
        } catch {
            throw ServiceError(.transport, "cannot create ZeroMQ sockets", cause: error)
        }
        publishing = PublishingThread(
            sink: FollowedTopicsSink(socket: publisher, wake: { [doorbell = control.doorbell] in doorbell.ring() }),
            limit: configuration.publishQueueLimit,
            counters: counters,
            logger: logger,
            threads: configuration.threadStarter
        )
        monitors = ConnectionMonitors(
            counters: counters,
            logger: logger,
            maxMessageBytes: configuration.transportMaxMessageBytes
        )
        if let curve = configuration.curve {
            authenticator = try Authenticator(context: context, settings: curve, counters: counters, logger: logger)
        } else {
            authenticator = nil
        }
        do {
            let ships = configuration.replication?.role == .primary || primaryTerm != nil
            let shippingDoorbell = ships ? try Doorbell() : nil
            self.shippingDoorbell = shippingDoorbell
            let gate =
                ships ? ReplicationGate(position: 0, wake: { [doorbell = control.doorbell] in doorbell.ring() }) : nil
            self.gate = gate
            pipeline = try ReceiptPipeline(
                configuration: configuration,
                logger: logger,
                counters: counters,
                sink: SocketSink(updates: publishing, ingest: ingest, queries: queries),
                wake: { [doorbell = control.doorbell] in
                    doorbell.ring()
                    shippingDoorbell?.ring()
                },
                gate: gate,
                onWorkerCount: { [control] count in control.workerCount = count }
            )
        } catch {
            authenticator?.close()
            for socket in [ingest, ingestSubscriber, publisher, queries] { socket.close() }
            context.terminate()
            if let error = error as? ServiceError { throw error }
            throw ServiceError(.system, "cannot make the shipping thread's wake-up pipe", cause: error)
        }
        if let primaryTerm, let gate, let replication = configuration.replication {
            pipeline.handOver = HandOver(
                primaryTerm: primaryTerm,
                member: replication.member,
                acknowledgement: replication.acknowledgement,
                gate: gate,
                logger: logger,
                wake: { [doorbell = control.doorbell] in doorbell.ring() }
            )
        }
    }

    /// The hand-over this loop ended with, if it ended with one.
    var handedOver: HandOverResult? { pipeline.handOver?.result }

    // MARK: - Running

    /// Binds, starts the publishing thread (and on a primary the shipping one), calls
    /// `onReady`, and serves until asked to stop or leave; then drains and closes everything.
    /// - Throws: `ServiceError` if binding fails or a thread cannot be started (before
    ///   `onReady`), or if the loop or the log fails.
    func run(onReady: () -> Void) throws(ServiceError) {
        control.primaryGate = gate
        defer {
            control.primaryGate = nil
            closeEverything()
        }
        try bindEndpoints()
        // First of the threads, so that a refusal comes before anything is shipped or logged.
        try publishing.start()
        try startShipping()
        logger.info(
            "serving",
            metadata: [
                "endpoint.ingest": "\(configuration.ingestEndpoint)",
                "endpoint.ingest_subscribe": "\(configuration.ingestSubscribeEndpoint)",
                "endpoint.publish": "\(configuration.publishEndpoint)",
                "endpoint.query": "\(configuration.queryEndpoint)",
                "worker.index": "\(configuration.workerIndex)",
                "worker.count": "\(pipeline.engine.topology.workerCount)",
            ]
        )
        onReady()

        // Two poll sets: while too many batches wait for the log, ingest is left unread (and
        // unpolled, so the loop sleeps instead of spinning on readable sockets).
        var everything = makePollSet(readingIngest: true)
        var queriesOnly = makePollSet(readingIngest: false)

        while true {
            let now = ServiceClock.monotonicMilliseconds()
            let timeout = pipeline.millisecondsUntilDue(now: now).map { min($0, 1000) } ?? 1000
            let readsIngest = pipeline.acceptsIngest
            let readable: PollSources
            do {
                readable =
                    readsIngest
                    ? try everything.poll(timeoutMilliseconds: Int(timeout))
                    : try queriesOnly.poll(timeoutMilliseconds: Int(timeout))
            } catch {
                throw ServiceError(.transport, "poll failed", cause: error)
            }
            if readable.contains(.doorbell) {
                control.doorbell.drain()
            }
            if control.takeKeyReload() {
                authenticator?.reload()
            }
            if readable.contains(.security) {
                do {
                    try authenticator?.drain()
                    try monitors.drain(authenticator: authenticator)
                } catch {
                    throw ServiceError(.transport, "ZAP handler or socket monitor failed", cause: error)
                }
            }
            try pipeline.advance(now: ServiceClock.monotonicMilliseconds())
            if pipeline.advanceHandOver(now: ServiceClock.monotonicMilliseconds()) { control.requestLeave() }
            // A stop on an elected primary hands the ordinal over before draining; a leave goes at
            // once, unless a hand-over's transaction is under way: its answer (and the demote's)
            // comes first.
            if control.shouldLeave, pipeline.handOver?.isCommitting != true,
                control.isLeaveRequested || !pipeline.handsOverBeforeStop(now: ServiceClock.monotonicMilliseconds())
            {
                break
            }
            if readable.contains(.ingest) { try drain(ingest, acknowledged: true) }
            if readable.contains(.ingestSubscriber) { try drain(ingestSubscriber, acknowledged: false) }
            if readable.contains(.queries) { try drainQueries() }
            // Batches that appended nothing (all duplicates or rejections) may already be durable.
            try pipeline.advance(now: ServiceClock.monotonicMilliseconds())
        }
        // Intake stops here: the loop no longer reads ingest; replies still go out.
        ingestSubscriber.close()
        try pipeline.shutDown()
    }

    /// What poll items are: one flag per item, and the union of the readable ones.
    private struct PollSources: OptionSet {
        let rawValue: UInt8
        static let doorbell = PollSources(rawValue: 1 << 0)
        static let queries = PollSources(rawValue: 1 << 1)
        static let ingest = PollSources(rawValue: 1 << 2)
        static let ingestSubscriber = PollSources(rawValue: 1 << 3)
        /// The socket monitors and the ZAP handler, drained together.
        static let security = PollSources(rawValue: 1 << 4)
    }

    /// A poller and what each of its items is.
    private struct PollSet {
        var poller = ZMQPoller()
        var sources: [PollSources] = []

        mutating func add(_ socket: ZMQSocket, as source: PollSources) {
            poller.add(socket)
            sources.append(source)
        }

        /// Waits as `ZMQPoller.poll` does.
        /// - Returns: the sources of the readable items.
        mutating func poll(timeoutMilliseconds: Int) throws(ZMQError) -> PollSources {
            guard try poller.poll(timeoutMilliseconds: timeoutMilliseconds) > 0 else { return [] }
            var readable: PollSources = []
            for (index, source) in sources.enumerated() where poller.isReadable(index) {
                readable.formUnion(source)
            }
            return readable
        }
    }

    /// The doorbell, the queries, both ingest sockets if `readingIngest`, then the socket
    /// monitors and the ZAP handler.
    private func makePollSet(readingIngest: Bool) -> PollSet {
        var set = PollSet()
        set.poller.add(fileDescriptor: control.doorbell.fileDescriptor)
        set.sources.append(.doorbell)
        set.add(queries, as: .queries)
        if readingIngest {
            set.add(ingest, as: .ingest)
            set.add(ingestSubscriber, as: .ingestSubscriber)
        }
        for socket in monitors.sockets + (authenticator.map { [$0.handler] } ?? []) {
            set.add(socket, as: .security)
        }
        return set
    }

    /// Hands up to `framesPerTurn` ingest messages to the pipeline, while it takes them, and
    /// lets it complete what became durable meanwhile.
    private func drain(_ socket: ZMQSocket, acknowledged: Bool) throws(ServiceError) {
        for _ in 0..<Self.framesPerTurn where pipeline.acceptsIngest {
            let received: Void?
            do {
                // Frames are borrowed from libzmq for the duration of the call: no copy before decoding.
                received = try socket.receiveMultipart(dontWait: true) { frames in
                    guard !acknowledged || pipeline.admits(frames, on: .ingest) else { return }
                    pipeline.receiveIngest(frames, acknowledged: acknowledged)
                }
            } catch {
                throw ServiceError(.transport, "ingest receive failed", cause: error)
            }
            if received == nil { return }
            pipeline.completeDurableIfDue()
        }
    }

    /// Hands up to `framesPerTurn` queries to the pipeline.
    private func drainQueries() throws(ServiceError) {
        // With CURVE on, the ZAP handler set the key's role as the connection's User-Id.
        let property = authenticator == nil ? nil : Authenticator.userIDProperty
        for _ in 0..<Self.framesPerTurn {
            let received: Void?
            do {
                received = try queries.receiveMultipart(dontWait: true, property: property) { frames, role in
                    guard pipeline.admits(frames, on: .queries) else { return }
                    pipeline.receiveQuery(frames, role: role.flatMap(ClientRole.init))
                }
            } catch {
                throw ServiceError(.transport, "query receive failed", cause: error)
            }
            if received == nil { return }
        }
    }

    private func bindEndpoints() throws(ServiceError) {
        let bindings: [(ZMQSocket, String)] = [
            (ingest, configuration.ingestEndpoint),
            (ingestSubscriber, configuration.ingestSubscribeEndpoint),
            (publisher, configuration.publishEndpoint),
            (queries, configuration.queryEndpoint),
        ]
        let endpoints: [ServiceEndpoint] = [.ingest, .ingestSubscribe, .publish, .query]
        do {
            for (socket, _) in bindings { try socket.setLinger(milliseconds: 2000) }
            for ((socket, _), endpoint) in zip(bindings, endpoints) {
                try authenticator?.secure(socket, as: endpoint)
                try monitors.watch(
                    socket,
                    as: endpoint,
                    disconnections: endpoint != .publish,
                    handshakes: authenticator != nil
                )
            }
            // Beyond the transport bound libzmq drops the connection outright (counted and
            // logged by the monitors); up to it, the frame arrives and gets a FRAME_TOO_LARGE reply.
            let maxMessageSize = configuration.transportMaxMessageBytes
            try ingest.setMaxMessageSize(maxMessageSize)
            try ingestSubscriber.setMaxMessageSize(maxMessageSize)
            try queries.setMaxMessageSize(maxMessageSize)
            try ingest.setRouterMandatory(true)
            try queries.setRouterMandatory(true)
            // Room for a connection's whole in-flight window twice over (libzmq learns of read
            // replies in steps of half its mark): a gateway within the limit is answered at
            // once; a reply that finds the queue full anyway is held (`HeldReplies`).
            let replyHighWaterMark = Int32(clamping: max(1000, 2 * configuration.gatewayLimits.maxFramesInFlight))
            try ingest.setSendHighWaterMark(replyHighWaterMark)
            try queries.setSendHighWaterMark(replyHighWaterMark)
            try publisher.setSendHighWaterMark(configuration.publishHighWaterMark)
            try ingestSubscriber.subscribe("")
        } catch {
            throw ServiceError(.transport, "cannot set socket options", cause: error)
        }
        for (socket, endpoint) in bindings {
            do {
                try socket.bind(endpoint)
            } catch {
                throw ServiceError(.transport, "cannot bind \(endpoint)", cause: error)
            }
        }
    }

    /// On a primary: binds the replication endpoint and starts shipping the log from it.
    private func startShipping() throws(ServiceError) {
        guard let replication = configuration.replication, let shippingDoorbell else { return }
        if let primaryTerm {
            try pipeline.startTerm(primaryTerm.term, member: replication.member)
        }
        let socket: ZMQSocket
        do {
            socket = try ZMQSocket(context: context, type: .router)
            try socket.setRouterMandatory(true)
            try socket.setLinger(milliseconds: 0)
            try authenticator?.secure(socket, as: .replication)
            try socket.bind(replication.endpoint)
        } catch {
            throw ServiceError(.transport, "cannot bind the replication endpoint \(replication.endpoint)", cause: error)
        }
        let log = pipeline.log
        let frontier = pipeline.frontier
        // Everything recovered was acknowledged before (or may be): the gate starts there.
        gate?.update(replicatedPosition: log.durablePosition.offset, refusal: .none)
        let shipper = Shipper(
            log: log,
            terms: pipeline.terms,
            settings: replication,
            workerIndex: configuration.workerIndex,
            engineSettings: ReplaySettings.recordedText(directory: configuration.dataDirectory),
            logger: logger,
            acknowledging: gate.map { gate in
                guard let primaryTerm else { return Shipper.Acknowledging(gate: gate) }
                let coordinator = primaryTerm.coordinator
                return Shipper.Acknowledging(
                    gate: gate,
                    recorder: InSyncRecorder(
                        write: { [ack = replication.acknowledgement.rawValue] set in
                            let record = InSyncRecord(term: primaryTerm.term, standbys: set.sorted(), ack: ack)
                            let written = try? await coordinator.recordInSync(
                                record,
                                guardRevision: primaryTerm.guardRevision
                            )
                            return written ?? false
                        },
                        wake: { shippingDoorbell.ring() }
                    ),
                    recorded: primaryTerm.recorded,
                    leaseDeadline: {
                        coordinator.lease == primaryTerm.lease ? coordinator.leaseDeadline : 0
                    }
                )
            },
            metrics: replicationMetrics,
            now: ServiceClock.monotonicMilliseconds(),
            acknowledged: { frontier.position.offset }
        )
        let thread = ShippingThread(
            socket: socket,
            shipper: shipper,
            doorbell: shippingDoorbell,
            heartbeatMilliseconds: replication.heartbeatMilliseconds,
            logger: logger,
            counters: pipeline.counters,
            onFailure: { [control] in control.requestLeave() },
            threads: configuration.threadStarter
        )
        do {
            try thread.start()
        } catch {
            socket.close()
            throw error
        }
        shipping = (socket, thread)
        logger.info(
            "shipping the log",
            metadata: [
                "endpoint.replication": "\(replication.endpoint)", "replication.member": "\(replication.member)",
            ]
        )
    }

    // MARK: - Shutdown

    private func closeEverything() {
        if let shipping {
            shipping.thread.stop()
            shipping.socket.close()
        }
        // Sends what the pipeline handed over (on shutdown, everything durable) before the PUB
        // closes; returns at once if the thread never started.
        publishing.stop()
        monitors.close()
        authenticator?.close()
        ingest.close()
        ingestSubscriber.close()
        publisher.close()
        queries.close()
        context.terminate()
        pipeline.close()
        logger.info("stopped")
    }
}
