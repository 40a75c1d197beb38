import Foundation
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// The worker's single-threaded loop: it owns the sockets and the engine.
///
/// Ingest frames are decoded and applied at once (so each event's outcome is known), the
/// frame is appended to the log, and the status changes and the reply wait in `awaiting`
/// until the log says the frame is durable: a published status and an acknowledgement always
/// mean "survives a crash". Query replies wait the same way for whatever they have seen,
/// so no client ever sees a state that a crash could take back.
final class ServiceLoop {
    /// Status changes and a reply waiting for the log to make `position` durable.
    struct AwaitingDurability {
        var position: LogPosition
        var changes: [MessageStatus]
        var reply: PendingReply?
        /// When an acknowledged ingest frame arrived (monotonic nanoseconds), for the
        /// acknowledgement latency; 0 for anything else.
        var receivedNanoseconds: UInt64 = 0
    }

    /// An encoded reply and the socket it goes out on.
    struct PendingReply {
        enum Socket { case ingest, queries }
        var socket: Socket
        var frames: [[UInt8]]
    }

    /// Frames handled from one socket before the loop looks at the others again.
    static let framesPerTurn = 512
    /// Past this many batches waiting for the log, ingest is not read (ZeroMQ's high-water
    /// marks then push back on gateways) until the log catches up.
    static let maxAwaiting = 65_536

    let configuration: ServiceConfiguration
    let logger: Logger
    let control: ServiceControl
    let context: ZMQContext
    let ingest: ZMQSocket
    let ingestSubscriber: ZMQSocket
    let publisher: ZMQSocket
    let queries: ZMQSocket
    /// The ZAP handler and handshake monitors, with CURVE on.
    let authenticator: Authenticator?
    let log: ReceiptLog
    let statusPublisher: StatusPublisher
    let counters: ServiceCounters
    let hot: HotCounters
    let metrics: ServiceMetrics
    /// When the gauges were last sampled (monotonic milliseconds).
    var gaugesSampledMonotonic: Int64 = 0
    /// The engine's dropped-receipt total at the last gauge sample.
    var droppedPendingReceiptsSampled = 0
    var engine: ReceiptEngine
    var clock = ServiceClock()
    var awaiting = AwaitingQueue()
    var compaction = CompactionSchedule()
    let startedMonotonic: Int64

    init(configuration: ServiceConfiguration, logger: Logger, control: ServiceControl) throws(ServiceError) {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        let counters = ServiceCounters()
        self.counters = counters
        hot = HotCounters(counters)
        // Registered up front so that they are exported (and alertable) at 0.
        for name in ["receiptd.log.fsync_errors", "receiptd.compactions", "receiptd.compactions.failed"] {
            _ = counters.handle(name)
        }
        for code in [ErrorReply.Code.malformedFrame, .unknownKind, .frameTooLarge, .wrongFrameCount] {
            _ = counters.handle("receiptd.frames.invalid", label: "\(code)")
        }
        for endpoint in ServiceEndpoint.allCases {
            _ = counters.handle("receiptd.auth.refused", label: endpoint.rawValue)
            _ = counters.handle("receiptd.auth.handshake_failures", label: endpoint.rawValue)
        }
        for step in LogRecord.Kind.moveSteps {
            _ = counters.handle("receiptd.moves.steps", label: step.name)
        }
        for name in ["receiptd.auth.reloads", "receiptd.auth.reloads.failed"] {
            _ = counters.handle(name)
        }
        for kind in Query.operatorKindNames {
            _ = counters.handle("receiptd.auth.denied", label: kind)
        }
        for limit in GatewayLimits.Limit.allCases {
            _ = counters.handle("receiptd.limits.refused", label: "\(limit)")
        }
        let metrics = ServiceMetrics(workerIndex: configuration.workerIndex, workerCount: configuration.workerCount)
        self.metrics = metrics
        startedMonotonic = ServiceClock.monotonicMilliseconds()
        compaction.lastStartedMonotonic = startedMonotonic

        var logConfiguration = LogConfiguration(directory: configuration.dataDirectory)
        logConfiguration.fsyncPolicy = configuration.fsyncPolicy
        logConfiguration.cutCorruptionAtStart = configuration.cutCorruptionAtStart
        do {
            log = try ReceiptLog(
                configuration: logConfiguration,
                logger: logger,
                onDurable: { [doorbell = control.doorbell] in doorbell.ring() },
                onFatal: { [control] error in control.reportFatal(error) },
                onGroupCommit: { commit in metrics.groupCommitted(commit) }
            )
        } catch {
            throw ServiceError(.storage, "cannot open the log in \(configuration.dataDirectory)", cause: error)
        }

        var engineConfiguration = EngineConfiguration(
            workerIndex: configuration.workerIndex,
            workerCount: configuration.workerCount,
            pendingReceiptLimit: configuration.pendingReceiptLimit,
            pendingReceiptLifetime: configuration.pendingReceiptLifetimeMilliseconds
        )
        engineConfiguration.workerCount = try ReplaySettings(engineConfiguration).reconcile(
            directory: configuration.dataDirectory,
            acceptChange: configuration.acceptSettingsChange
        )
        engine = try Self.recover(
            log: log,
            configuration: engineConfiguration,
            clock: &clock,
            counters: counters,
            logger: logger
        )
        if engine.topology.workerCount != configuration.workerCount {
            logger.warning(
                "the configured worker count differs from the log's; the log's stands (change it with receiptctl rebalance)",
                metadata: [
                    "worker.count.configured": "\(configuration.workerCount)",
                    "worker.count.log": "\(engine.topology.workerCount)",
                    "move.epoch": "\(engine.topology.epoch)",
                ]
            )
        }
        // The engine's total is kept in snapshots and replayed: only what is dropped from now on
        // is new to this process's counter (else every restart would look like fresh drops).
        droppedPendingReceiptsSampled = engine.counters.droppedPendingReceipts
        metrics.recoveryDuration.record(Double(ServiceClock.monotonicMilliseconds() - startedMonotonic) / 1000)

        do {
            context = try ZMQContext()
            ingest = try ZMQSocket(context: context, type: .router)
            ingestSubscriber = try ZMQSocket(context: context, type: .sub)
            publisher = try ZMQSocket(context: context, type: .pub)
            queries = try ZMQSocket(context: context, type: .router)
        } catch {
            throw ServiceError(.transport, "cannot create ZeroMQ sockets", cause: error)
        }
        if let curve = configuration.curve {
            authenticator = try Authenticator(context: context, settings: curve, counters: counters, logger: logger)
        } else {
            authenticator = nil
        }
        let epoch = UInt64(bitPattern: Int64(Date().timeIntervalSince1970 * 1_000_000))
        statusPublisher = StatusPublisher(
            socket: publisher,
            windowMilliseconds: configuration.coalesceMilliseconds,
            epoch: epoch,
            onPublished: { [counters, updatesPublished = hot.updatesPublished] count in
                counters.increment(updatesPublished, by: count)
            }
        )
    }

    // MARK: - Running

    func run(onReady: () -> Void) throws(ServiceError) {
        defer { closeEverything() }
        try bindEndpoints()
        logger.info(
            "serving",
            metadata: [
                "endpoint.ingest": "\(configuration.ingestEndpoint)",
                "endpoint.ingest_subscribe": "\(configuration.ingestSubscribeEndpoint)",
                "endpoint.publish": "\(configuration.publishEndpoint)",
                "endpoint.query": "\(configuration.queryEndpoint)",
                "worker.index": "\(configuration.workerIndex)",
                "worker.count": "\(engine.topology.workerCount)",
            ]
        )
        onReady()

        // Two pollers: while too many batches wait for the log, ingest is left unread (and
        // unpolled, so the loop sleeps instead of spinning on readable sockets).
        // The authenticator's sockets (ZAP and monitors) come last in both, from `firstSecurityItem` on.
        var everything = ZMQPoller()
        everything.add(fileDescriptor: control.doorbell.fileDescriptor)
        everything.add(queries)
        let ingestItem = everything.add(ingest)
        let subscriberItem = everything.add(ingestSubscriber)
        var queriesOnly = ZMQPoller()
        queriesOnly.add(fileDescriptor: control.doorbell.fileDescriptor)
        queriesOnly.add(queries)
        let (doorbellItem, queryItem) = (0, 1)
        let securitySockets = authenticator?.sockets ?? []
        let firstSecurityItem = (everything.count, queriesOnly.count)
        for socket in securitySockets {
            everything.add(socket)
            queriesOnly.add(socket)
        }

        while true {
            let now = ServiceClock.monotonicMilliseconds()
            let timeout = statusPublisher.millisecondsUntilDue(now: now).map { min($0, 1000) } ?? 1000
            let readsIngest = awaiting.count < Self.maxAwaiting
            do {
                if readsIngest {
                    _ = try everything.poll(timeoutMilliseconds: Int(timeout))
                } else {
                    _ = try queriesOnly.poll(timeoutMilliseconds: Int(timeout))
                }
            } catch {
                throw ServiceError(.transport, "poll failed", cause: error)
            }
            let poller = readsIngest ? everything : queriesOnly
            if poller.isReadable(doorbellItem) {
                control.doorbell.drain()
            }
            if control.takeKeyReload() {
                authenticator?.reload()
            }
            let firstSecurity = readsIngest ? firstSecurityItem.0 : firstSecurityItem.1
            if let authenticator, securitySockets.indices.contains(where: { poller.isReadable(firstSecurity + $0) }) {
                do {
                    try authenticator.drain()
                } catch {
                    throw ServiceError(.transport, "ZAP handler failed", cause: error)
                }
            }
            try stopIfLogFailed()
            completeDurable()
            finishCompactionIfDone()
            if control.isStopRequested { break }
            if readsIngest, poller.isReadable(ingestItem) { try drain(ingest, acknowledged: true) }
            if readsIngest, poller.isReadable(subscriberItem) { try drain(ingestSubscriber, acknowledged: false) }
            if poller.isReadable(queryItem) { try drainQueries() }
            try stopIfLogFailed()
            // Batches that appended nothing (all duplicates or rejections) may already be durable.
            completeDurable()
            statusPublisher.flushDue(now: ServiceClock.monotonicMilliseconds())
            startCompactionIfDue()
            sampleGaugesIfDue()
        }
        try shutDown()
    }

    /// An append or sync failed: stop at once, acknowledging nothing more (fsyncgate: a later
    /// sync may falsely succeed). Restart recovers from the log.
    private func stopIfLogFailed() throws(ServiceError) {
        guard let fatal = control.fatalError else { return }
        counters.increment("receiptd.log.fsync_errors")
        logger.critical("log failed; stopping without acknowledging further batches", metadata: ["error": "\(fatal)"])
        throw ServiceError(.storage, "the log failed", cause: fatal)
    }

    private func bindEndpoints() throws(ServiceError) {
        let maxMessageSize = Int64(configuration.maxFrameBytes) * 2 + 4096
        let bindings: [(ZMQSocket, String)] = [
            (ingest, configuration.ingestEndpoint),
            (ingestSubscriber, configuration.ingestSubscribeEndpoint),
            (publisher, configuration.publishEndpoint),
            (queries, configuration.queryEndpoint),
        ]
        let endpoints: [ServiceEndpoint] = [.ingest, .ingestSubscribe, .publish, .query]
        do {
            for (socket, _) in bindings { try socket.setLinger(milliseconds: 2000) }
            if let authenticator {
                for ((socket, _), endpoint) in zip(bindings, endpoints) {
                    try authenticator.secure(socket, as: endpoint)
                }
            }
            // Beyond twice the application limit libzmq drops the connection outright; up to
            // that, the frame arrives and gets a FRAME_TOO_LARGE reply.
            try ingest.setMaxMessageSize(maxMessageSize)
            try ingestSubscriber.setMaxMessageSize(maxMessageSize)
            try queries.setMaxMessageSize(maxMessageSize)
            try ingest.setRouterMandatory(true)
            try queries.setRouterMandatory(true)
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

    // MARK: - Durability

    /// Queues a reply to go out once everything appended so far is durable (at once if it is).
    func reply(_ frames: [[UInt8]], on socket: PendingReply.Socket) {
        let position = log.appendedPosition
        if awaiting.isEmpty, position <= log.durablePosition {
            send(frames, on: socket)
        } else {
            awaiting.append(
                AwaitingDurability(position: position, changes: [], reply: PendingReply(socket: socket, frames: frames))
            )
        }
    }

    /// Publishes the changes and then sends the replies of everything the log has made durable.
    ///
    /// Publishing first means that by the time a gateway holds an acknowledgement, the status
    /// update it caused is already on the PUB socket.
    func completeDurable() {
        guard control.fatalError == nil else { return }
        let durable = log.durablePosition
        let nowNanoseconds = ServiceClock.monotonicNanoseconds()
        let now = Int64(nowNanoseconds / 1_000_000)
        while let item = awaiting.first, item.position <= durable {
            _ = awaiting.popFirst()
            if !item.changes.isEmpty {
                statusPublisher.submit(item.changes, now: now)
            }
            if let reply = item.reply {
                send(reply.frames, on: reply.socket)
            }
            if item.receivedNanoseconds > 0 {
                metrics.ackLatency.recordNanoseconds(nowNanoseconds - item.receivedNanoseconds)
            }
        }
    }

    func send(_ frames: [[UInt8]], on target: PendingReply.Socket) {
        let socket = target == .ingest ? ingest : queries
        do {
            if try !socket.send(frames, dontWait: true) {
                counters.increment("receiptd.replies.dropped", label: "would_block")
            }
        } catch {
            // ROUTER_MANDATORY: the peer went away before its reply was ready.
            counters.increment("receiptd.replies.dropped", label: "unroutable")
            logger.debug("reply not delivered", metadata: ["error": "\(error)"])
        }
    }

    /// Samples the gauges about once a second (the engine is this thread's alone).
    private func sampleGaugesIfDue() {
        let now = ServiceClock.monotonicMilliseconds()
        guard now - gaugesSampledMonotonic >= ServiceMetrics.gaugeIntervalMilliseconds else { return }
        gaugesSampledMonotonic = now
        let engineCounters = engine.counters
        metrics.sample(
            engine: engineCounters,
            droppedBefore: droppedPendingReceiptsSampled,
            awaiting: awaiting.count,
            log: log
        )
        droppedPendingReceiptsSampled = engineCounters.droppedPendingReceipts
    }

    // MARK: - Shutdown

    /// Stops intake, makes everything accepted durable, publishes and answers it.
    private func shutDown() throws(ServiceError) {
        logger.info("stopping", metadata: ["shutdown.awaiting_batches": "\(awaiting.count)"])
        // Intake stops here: the loop no longer reads ingest; replies still go out below.
        ingestSubscriber.close()
        do {
            try log.flush()
        } catch {
            throw ServiceError(.storage, "cannot make the last batches durable", cause: error)
        }
        completeDurable()
        statusPublisher.flushDue(now: nil)
        while compaction.isRunning {
            usleep(10_000)
            finishCompactionIfDone()
        }
    }

    private func closeEverything() {
        authenticator?.close()
        ingest.close()
        ingestSubscriber.close()
        publisher.close()
        queries.close()
        context.terminate()
        do {
            try log.close()
        } catch {
            logger.error("closing the log failed", metadata: ["error": "\(error)"])
        }
        logger.info("stopped")
    }
}
