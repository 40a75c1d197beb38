import Foundation
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// The worker's single-threaded loop: it owns the sockets and the engine.
///
/// Ingest frames are decoded and applied at once (so each event's outcome is known), the
/// frame is appended to the log, and the reply and the status changes wait in `awaiting`
/// until the log says the frame is durable: an acknowledgement and a published status
/// always mean "survives a crash". Queries read the engine directly.
final class ServiceLoop {
    /// A reply and status changes waiting for the log to make `position` durable.
    private struct AwaitingDurability {
        var position: LogPosition
        var reply: (envelope: RequestEnvelope, results: [EventOutcome])?
        var changes: [MessageStatus]
    }

    /// Frames handled from one socket before the loop looks at the others again.
    private static let framesPerTurn = 512

    private let configuration: ServiceConfiguration
    private let logger: Logger
    private let control: ServiceControl
    private let context: ZMQContext
    private let ingest: ZMQSocket
    private let ingestSubscriber: ZMQSocket
    private let publisher: ZMQSocket
    private let queries: ZMQSocket
    private let log: ReceiptLog
    private let statusPublisher: StatusPublisher
    private let counters = ServiceCounters()
    private var engine: ReceiptEngine
    private var clock = ServiceClock()
    private var awaiting: [AwaitingDurability] = []
    private var compactionRequesters: [RequestEnvelope] = []
    private var isCompacting = false
    private var lastCompactionMonotonic: Int64
    private let startedMonotonic: Int64
    private var state = "serving"

    init(configuration: ServiceConfiguration, logger: Logger, control: ServiceControl) throws(ServiceError) {
        self.configuration = configuration
        self.logger = logger
        self.control = control
        startedMonotonic = ServiceClock.monotonicMilliseconds()
        lastCompactionMonotonic = startedMonotonic

        do {
            try FileManager.default.createDirectory(
                atPath: configuration.dataDirectory, withIntermediateDirectories: true)
        } catch {
            throw ServiceError(.system, "cannot create data directory \(configuration.dataDirectory)", cause: error)
        }

        var logConfiguration = LogConfiguration(directory: configuration.dataDirectory)
        logConfiguration.fsyncPolicy = configuration.fsyncPolicy
        logConfiguration.cutCorruptionAtStart = configuration.cutCorruptionAtStart
        do {
            log = try ReceiptLog(
                configuration: logConfiguration, logger: logger,
                onDurable: { [doorbell = control.doorbell] in doorbell.ring() },
                onFatal: { [control] error in control.reportFatal(error) })
        } catch {
            throw ServiceError(.storage, "cannot open the log in \(configuration.dataDirectory)", cause: error)
        }

        let engineConfiguration = EngineConfiguration(
            workerIndex: configuration.workerIndex,
            workerCount: configuration.workerCount,
            pendingReceiptLimit: configuration.pendingReceiptLimit,
            pendingReceiptLifetime: configuration.pendingReceiptLifetimeMilliseconds)
        engine = try Self.recover(log: log, configuration: engineConfiguration, clock: &clock, counters: counters, logger: logger)

        do {
            context = try ZMQContext()
            ingest = try ZMQSocket(context: context, type: .router)
            ingestSubscriber = try ZMQSocket(context: context, type: .sub)
            publisher = try ZMQSocket(context: context, type: .pub)
            queries = try ZMQSocket(context: context, type: .router)
        } catch {
            throw ServiceError(.transport, "cannot create ZeroMQ sockets", cause: error)
        }
        let epoch = UInt64(bitPattern: Int64(Date().timeIntervalSince1970 * 1_000_000))
        statusPublisher = StatusPublisher(
            socket: publisher, windowMilliseconds: configuration.coalesceMilliseconds, epoch: epoch,
            onPublished: { [counters] count in counters.increment("receiptd.updates.published", by: count) })
    }

    /// Loads the newest snapshot and replays the log after it.
    private static func recover(
        log: ReceiptLog, configuration: EngineConfiguration, clock: inout ServiceClock,
        counters: ServiceCounters, logger: Logger
    ) throws(ServiceError) -> ReceiptEngine {
        let report = log.recovery
        if report.truncatedBytes > 0 {
            counters.increment("receiptd.log.truncated_bytes", by: Int(report.truncatedBytes))
            counters.increment("receiptd.log.dropped_records", by: report.droppedRecords)
        }
        var engine = ReceiptEngine(configuration: configuration)
        if let snapshot = log.latestSnapshot {
            do {
                engine = try ReceiptEngine(restoringFrom: snapshot.payload, configuration: configuration)
            } catch {
                throw ServiceError(.recovery, "snapshot at log position \(snapshot.position.offset) cannot be decoded", cause: error)
            }
        }
        var replayed = 0
        let started = ServiceClock.monotonicMilliseconds()
        do {
            try log.replay { type, payload, end in
                guard let (time, frame) = IngestRecord.decode(payload) else {
                    throw ServiceError(.recovery, "log record of type \(type) ending at \(end.offset) is too short")
                }
                let events = try EventBatchCodec.decode(frame)
                for event in events { _ = engine.apply(event, at: time) }
                clock.advance(to: time)
                replayed += events.count
            }
        } catch let error as ServiceError {
            throw error
        } catch {
            throw ServiceError(.recovery, "cannot replay the log", cause: error)
        }
        logger.info(
            "recovered",
            metadata: [
                "recovery.snapshot_position": "\(log.latestSnapshot?.position.offset ?? 0)",
                "recovery.replayed_events": "\(replayed)",
                "recovery.milliseconds": "\(ServiceClock.monotonicMilliseconds() - started)",
                "recovery.truncated_bytes": "\(report.truncatedBytes)",
                "recovery.dropped_records": "\(report.droppedRecords)",
            ])
        return engine
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
                "worker.count": "\(configuration.workerCount)",
            ])
        onReady()

        var poller = ZMQPoller()
        let doorbellItem = poller.add(fileDescriptor: control.doorbell.fileDescriptor)
        let ingestItem = poller.add(ingest)
        let subscriberItem = poller.add(ingestSubscriber)
        let queryItem = poller.add(queries)

        while true {
            let now = ServiceClock.monotonicMilliseconds()
            let timeout = statusPublisher.millisecondsUntilDue(now: now).map { min($0, 1000) } ?? 1000
            do {
                _ = try poller.poll(timeoutMilliseconds: Int(timeout))
            } catch {
                throw ServiceError(.transport, "poll failed", cause: error)
            }
            if poller.isReadable(doorbellItem) {
                control.doorbell.drain()
            }
            if let fatal = control.fatalError {
                logger.critical("log failed; stopping without acknowledging further batches", metadata: ["error": "\(fatal)"])
                throw ServiceError(.storage, "the log failed", cause: fatal)
            }
            completeDurable()
            finishCompactionIfDone()
            if control.isStopRequested { break }
            if poller.isReadable(ingestItem) { try drain(ingest, acknowledged: true) }
            if poller.isReadable(subscriberItem) { try drain(ingestSubscriber, acknowledged: false) }
            if poller.isReadable(queryItem) { try drainQueries() }
            // Batches that appended nothing (all duplicates or rejections) may already be durable.
            completeDurable()
            statusPublisher.flushDue(now: ServiceClock.monotonicMilliseconds())
            startCompactionIfDue()
        }
        try shutDown()
    }

    private func bindEndpoints() throws(ServiceError) {
        let maxMessageSize = Int64(configuration.maxFrameBytes) * 2 + 4096
        let bindings: [(ZMQSocket, String)] = [
            (ingest, configuration.ingestEndpoint),
            (ingestSubscriber, configuration.ingestSubscribeEndpoint),
            (publisher, configuration.publishEndpoint),
            (queries, configuration.queryEndpoint),
        ]
        do {
            for (socket, _) in bindings { try socket.setLinger(milliseconds: 2000) }
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

    // MARK: - Ingest

    private func drain(_ socket: ZMQSocket, acknowledged: Bool) throws(ServiceError) {
        for _ in 0..<Self.framesPerTurn {
            let frames: [[UInt8]]?
            do {
                frames = try socket.receiveMultipart(dontWait: true)
            } catch {
                throw ServiceError(.transport, "ingest receive failed", cause: error)
            }
            guard let frames else { return }
            if acknowledged {
                handleAcknowledgedIngest(frames)
            } else {
                handleUnacknowledgedIngest(frames)
            }
        }
    }

    private func handleAcknowledgedIngest(_ frames: [[UInt8]]) {
        counters.increment("receiptd.frames.received", label: "ingest")
        guard let (envelope, body) = RequestEnvelope.split(frames) else { return }
        guard body.count == 1, let frame = body.first else {
            refuse(envelope: envelope, code: .wrongFrameCount, "expected one EventBatch frame after the envelope, got \(body.count)")
            return
        }
        switch ingestFrame(frame, recordType: IngestRecord.acknowledgedBatch) {
        case .success(let (position, results, changes)):
            awaiting.append(AwaitingDurability(position: position, reply: (envelope, results), changes: changes))
        case .failure(let error):
            refuse(envelope: envelope, code: error.code, error.message)
        }
    }

    private func handleUnacknowledgedIngest(_ frames: [[UInt8]]) {
        counters.increment("receiptd.frames.received", label: "ingest_subscribe")
        // A gateway's PUB may put a topic frame first; the batch is the last frame.
        guard (1...2).contains(frames.count), let frame = frames.last else {
            countInvalidFrame(.wrongFrameCount, "fire-and-forget ingest expects 1 or 2 frames, got \(frames.count)")
            return
        }
        switch ingestFrame(frame, recordType: IngestRecord.unacknowledgedBatch) {
        case .success(let (position, _, changes)):
            awaiting.append(AwaitingDurability(position: position, reply: nil, changes: changes))
        case .failure(let error):
            countInvalidFrame(error.code, error.message)
        }
    }

    private struct FrameRefusal: Error {
        var code: ErrorReply.Code
        var message: String
    }

    /// Decodes, applies and logs one batch frame.
    /// - Returns: the log position the outcome waits for, the per-event outcomes, the status changes.
    private func ingestFrame(
        _ frame: [UInt8], recordType: UInt8
    ) -> Result<(LogPosition, [EventOutcome], [MessageStatus]), FrameRefusal> {
        guard frame.count <= configuration.maxFrameBytes else {
            return .failure(FrameRefusal(code: .frameTooLarge, message: "frame of \(frame.count) bytes exceeds the limit of \(configuration.maxFrameBytes)"))
        }
        let events: [Event]
        do {
            events = try EventBatchCodec.decode(frame)
        } catch {
            return .failure(FrameRefusal(code: .malformedFrame, message: "undecodable EventBatch: \(error.message)"))
        }
        let now = clock.now()
        var outcomes: [EventOutcome] = []
        outcomes.reserveCapacity(events.count)
        var changes: [MessageStatus] = []
        var changedState = false
        for event in events {
            let result = engine.apply(event, at: now)
            outcomes.append(result.outcome)
            changes.append(contentsOf: result.changes)
            count(result.outcome)
            if case .accepted = result.outcome { changedState = true }
        }
        // Only accepted events change state; anything else waits for what is already in flight,
        // so that a duplicate is never acknowledged before its original is durable.
        var position = log.appendedPosition
        if changedState {
            let record = IngestRecord.encode(time: now, frame: frame)
            let appended = record.withUnsafeBytes { bytes in
                Result { () throws(LogError) in try log.append(type: recordType, payload: bytes) }
            }
            switch appended {
            case .success(let end):
                position = end
            case .failure(let error):
                control.reportFatal(error)
                return .failure(FrameRefusal(code: .unavailable, message: "the log refused the batch: \(error)"))
            }
        }
        return .success((position, outcomes, changes))
    }

    private func count(_ outcome: EventOutcome) {
        switch outcome {
        case .accepted(let held):
            counters.increment("receiptd.events.accepted")
            if held { counters.increment("receiptd.events.held") }
        case .duplicate:
            counters.increment("receiptd.events.duplicate")
        case .rejected(let rejection):
            counters.increment("receiptd.events.rejected", label: rejection.reason.name)
            logger.debug(
                "event rejected",
                metadata: ["event.reason": "\(rejection.reason.name)", "event.detail": "\(rejection.detail)"])
        }
    }

    private func countInvalidFrame(_ code: ErrorReply.Code, _ message: String) {
        counters.increment("receiptd.frames.invalid", label: "\(code)")
        logger.warning("invalid frame", metadata: ["frame.error": "\(code)", "frame.detail": "\(message)"])
    }

    /// Answers a bad ingest frame at once: there is nothing to make durable.
    private func refuse(envelope: RequestEnvelope, code: ErrorReply.Code, _ message: String) {
        countInvalidFrame(code, message)
        send(envelope.reply(IngestReply(results: [], error: ErrorReply(code: code, message: message)).encode()), on: ingest)
    }

    /// Sends the replies and publishes the changes of every batch the log has made durable.
    private func completeDurable() {
        guard !awaiting.isEmpty else { return }
        let durable = log.durablePosition
        let done = awaiting.prefix { $0.position <= durable }.count
        guard done > 0 else { return }
        let now = ServiceClock.monotonicMilliseconds()
        for item in awaiting[..<done] {
            if let (envelope, results) = item.reply {
                send(envelope.reply(IngestReply(results: results, error: nil).encode()), on: ingest)
            }
            if !item.changes.isEmpty {
                statusPublisher.submit(item.changes, now: now)
            }
        }
        awaiting.removeFirst(done)
    }

    private func send(_ frames: [[UInt8]], on socket: ZMQSocket) {
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

    // MARK: - Queries

    private func drainQueries() throws(ServiceError) {
        for _ in 0..<Self.framesPerTurn {
            let frames: [[UInt8]]?
            do {
                frames = try queries.receiveMultipart(dontWait: true)
            } catch {
                throw ServiceError(.transport, "query receive failed", cause: error)
            }
            guard let frames else { return }
            counters.increment("receiptd.frames.received", label: "query")
            guard let (envelope, body) = RequestEnvelope.split(frames) else { continue }
            if let reply = answer(body: body, envelope: envelope) {
                send(envelope.reply(reply.encode()), on: queries)
            }
        }
    }

    /// The reply to one query, or nil when it will come later (compaction).
    private func answer(body: ArraySlice<[UInt8]>, envelope: RequestEnvelope) -> QueryReply? {
        guard body.count == 1, let frame = body.first else {
            countInvalidFrame(.wrongFrameCount, "expected one Query frame after the envelope, got \(body.count)")
            return .error(ErrorReply(code: .wrongFrameCount, message: "expected one Query frame after the envelope, got \(body.count)"))
        }
        guard frame.count <= configuration.maxFrameBytes else {
            countInvalidFrame(.frameTooLarge, "query of \(frame.count) bytes")
            return .error(ErrorReply(code: .frameTooLarge, message: "query of \(frame.count) bytes exceeds the limit of \(configuration.maxFrameBytes)"))
        }
        let query: Query
        do {
            query = try Query.decode(frame)
        } catch {
            let code: ErrorReply.Code = error.code == .unknownKind ? .unknownKind : .malformedFrame
            countInvalidFrame(code, error.message)
            return .error(ErrorReply(code: code, message: "undecodable Query: \(error.message)"))
        }
        let handler = QueryHandler(
            engine: engine, workerIndex: configuration.workerIndex, workerCount: configuration.workerCount)
        counters.increment("receiptd.queries.served", label: query.kindName)
        switch query {
        case .health:
            return .health(
                Health(
                    state: state, workerIndex: configuration.workerIndex, workerCount: configuration.workerCount,
                    uptimeMilliseconds: UInt64(ServiceClock.monotonicMilliseconds() - startedMonotonic),
                    epoch: statusPublisher.epoch))
        case .stats:
            return .stats(statistics())
        case .compact:
            compactionRequesters.append(envelope)
            startCompaction(reason: "requested")
            return nil
        case .snapshot(let conversation, _):
            return handler.answer(query, publishedSequence: statusPublisher.sequence(of: conversation), epoch: statusPublisher.epoch)
        default:
            return handler.answer(query, publishedSequence: 0, epoch: statusPublisher.epoch)
        }
    }

    private func statistics() -> [ReceiptsWire.Counter] {
        let engineCounters = engine.counters
        return counters.snapshot() + [
            ReceiptsWire.Counter(name: "receiptd.pending.held", label: "", value: UInt64(engineCounters.heldReceipts)),
            ReceiptsWire.Counter(name: "receiptd.pending.dropped", label: "", value: UInt64(engineCounters.droppedPendingReceipts)),
            ReceiptsWire.Counter(name: "receiptd.log.bytes_since_snapshot", label: "", value: log.bytesSinceSnapshot),
            ReceiptsWire.Counter(name: "receiptd.log.durable_position", label: "", value: log.durablePosition.offset),
        ]
    }

    // MARK: - Compaction

    private func startCompactionIfDue() {
        guard !isCompacting else { return }
        let sinceSnapshot = log.bytesSinceSnapshot
        if sinceSnapshot >= configuration.compactAfterBytes {
            startCompaction(reason: "size")
        } else if configuration.compactIntervalSeconds > 0, sinceSnapshot > 0,
            ServiceClock.monotonicMilliseconds() - lastCompactionMonotonic >= Int64(configuration.compactIntervalSeconds) * 1000
        {
            startCompaction(reason: "interval")
        }
    }

    /// Snapshots the engine (an O(1) copy of a value type) at the log's current end and
    /// encodes and writes it on another thread, so intake never waits for it.
    private func startCompaction(reason: String) {
        guard !isCompacting else { return }
        isCompacting = true
        lastCompactionMonotonic = ServiceClock.monotonicMilliseconds()
        var expiredCount = 0
        if configuration.retentionSeconds > 0 {
            let cutoff = Timestamp(milliseconds: clock.now().milliseconds - configuration.retentionSeconds * 1000)
            expiredCount = engine.expireMessages(sentBefore: cutoff)
        }
        let expired = expiredCount
        let state = engine
        let position = log.appendedPosition
        let log = self.log
        let control = self.control
        logger.debug("compaction started", metadata: ["compaction.reason": "\(reason)", "compaction.position": "\(position.offset)"])
        let thread = Thread {
            let payload = state.encodedState()
            let result = Result { () throws(LogError) in try log.writeSnapshot(payload, covering: position) }
            control.reportCompaction(ServiceControl.CompactionOutcome(result: result, messagesExpired: expired))
        }
        thread.name = "receiptd-compaction"
        thread.start()
    }

    private func finishCompactionIfDone() {
        guard let outcome = control.takeCompaction() else { return }
        isCompacting = false
        let reply: QueryReply
        switch outcome.result {
        case .success(let report):
            counters.increment("receiptd.compactions")
            counters.increment("receiptd.messages.expired", by: outcome.messagesExpired)
            logger.info(
                "compacted",
                metadata: [
                    "compaction.snapshot_bytes": "\(report.snapshotBytes)",
                    "compaction.segments_removed": "\(report.segmentsRemoved)",
                    "compaction.messages_expired": "\(outcome.messagesExpired)",
                ])
            reply = .compact(
                CompactResult(
                    snapshotBytes: report.snapshotBytes, segmentsRemoved: report.segmentsRemoved,
                    messagesExpired: UInt64(outcome.messagesExpired)))
        case .failure(let error):
            counters.increment("receiptd.compactions.failed")
            logger.error("compaction failed", metadata: ["error": "\(error)"])
            reply = .error(ErrorReply(code: .internal, message: "compaction failed: \(error)"))
        }
        for envelope in compactionRequesters {
            send(envelope.reply(reply.encode()), on: queries)
        }
        compactionRequesters.removeAll()
    }

    // MARK: - Shutdown

    /// Stops intake, makes everything accepted durable, answers and publishes it.
    private func shutDown() throws(ServiceError) {
        state = "stopping"
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
        while isCompacting {
            usleep(10_000)
            finishCompactionIfDone()
        }
    }

    private func closeEverything() {
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
