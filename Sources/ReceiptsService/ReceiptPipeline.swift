import Foundation
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsReplication
import ReceiptsWire

/// The worker without its transport: the engine, the clock, the log, the queue of outcomes
/// waiting for durability, compaction and publishing. It takes received frames and emits
/// status updates and replies through a `PipelineSink`; `ServiceLoop` feeds it from the
/// sockets, tests feed it directly.
///
/// Ingest frames are decoded and applied at once (so each event's outcome is known), the
/// frame is appended to the log, and the status changes and the reply wait in `awaiting`
/// until the log says the frame is durable: a published status and an acknowledgement always
/// mean "survives a crash". Query replies wait the same way for whatever they have seen,
/// so no client ever sees a state that a crash could take back.
///
/// Single-threaded: every method runs on the thread that owns the pipeline.
final class ReceiptPipeline {
    /// What to publish and a reply, waiting for the log to make `position` durable.
    struct AwaitingDurability {
        var position: LogPosition
        var changes: Publication
        var reply: PendingReply?
        /// When an acknowledged ingest frame arrived (monotonic nanoseconds), for the
        /// acknowledgement latency; 0 for anything else.
        var receivedNanoseconds: UInt64 = 0
        /// The stages of a sampled acknowledged ingest frame so far; nil for anything else.
        var trace: IngestStageTrace?
    }

    /// An encoded reply and the endpoint it goes out on.
    struct PendingReply {
        var endpoint: ReplyEndpoint
        var frames: [[UInt8]]
    }

    /// Past this many batches waiting for the log, ingest is not read (ZeroMQ's high-water
    /// marks then push back on gateways) until the log catches up.
    static let maxAwaiting = 65_536
    /// How often a long drain stops to publish and acknowledge what became durable meanwhile.
    static let completionIntervalNanoseconds: UInt64 = 1_000_000
    /// How often held replies are offered to their ROUTER again.
    static let heldReplyRetryMilliseconds: Int64 = 1
    /// How long shutdown waits for held replies to leave (the sockets' linger).
    static let heldReplyShutdownMilliseconds: Int64 = 2000

    let configuration: ServiceConfiguration
    let logger: Logger
    let sink: any PipelineSink
    let signals: PipelineSignals
    let log: ReceiptLog
    /// What counts as acknowledged-durable: the one durability the pipeline gates on.
    let frontier: DurabilityFrontier
    let statusPublisher: StatusPublisher
    let counters: ServiceCounters
    let hot: HotCounters
    let metrics: ServiceMetrics
    /// `maxAwaiting` in service; smaller in tests.
    let awaitingLimit: Int
    /// When the gauges were last sampled (monotonic milliseconds).
    var gaugesSampledMonotonic: Int64 = 0
    /// The engine's totals at the last gauge sample (its counters grow by the difference).
    var engineCountersSampled = EngineCounters()
    /// Told the worker count the log holds, at start-up and whenever a rebalance changes it.
    let onWorkerCount: (Int) -> Void
    /// The worker count last reported to `onWorkerCount` and the metrics.
    var reportedWorkerCount = 0
    var engine: ReceiptEngine
    var clock: ServiceClock
    /// The log's terms, rebuilt at recovery (deploy/REPLICATION.md, section 7.1).
    var terms = TermHistory()
    var awaiting = AwaitingQueue()
    var compaction = CompactionSchedule()
    /// Replies their ROUTER could not take yet; a peer holds at most its in-flight limit.
    var heldReplies: HeldReplies
    /// Discarded requests are logged at most once a second.
    var discardsLogged = LogThrottle<ReplyEndpoint>(intervalMilliseconds: 1000)
    /// When `completeDurable` last ran (monotonic nanoseconds).
    var completedNanoseconds: UInt64 = 0
    /// Acknowledged ingest frames taken, for sampling their stages.
    var acknowledgedFrames: UInt64 = 0
    /// The switchover of an elected primary (set by its `ServiceLoop`); nil on any other worker.
    var handOver: HandOver?
    let startedMonotonic: Int64

    /// Opens the log and recovers the engine from it.
    /// - Parameters:
    ///   - counters: The worker's counters (the authenticator counts into them too).
    ///   - sink: Where updates and replies go.
    ///   - wake: Called from other threads (the log's, the compaction's) when the pipeline has
    ///     work: something became durable, a compaction finished, the log failed.
    ///   - awaitingLimit: Batches waiting for the log past which `acceptsIngest` is false.
    ///   - gate: What acknowledgements wait for besides the log, under `--replication-ack standby`.
    ///   - onWorkerCount: Told the worker count the log holds, once recovered and after each
    ///     change (on the pipeline's thread).
    /// - Throws: `ServiceError` if the log cannot be opened or replayed.
    init(
        configuration: ServiceConfiguration,
        logger: Logger,
        counters: ServiceCounters,
        sink: any PipelineSink,
        wake: @escaping @Sendable () -> Void,
        awaitingLimit: Int = ReceiptPipeline.maxAwaiting,
        gate: ReplicationGate? = nil,
        onWorkerCount: @escaping (Int) -> Void = { _ in }
    ) throws(ServiceError) {
        self.configuration = configuration
        self.logger = logger
        self.counters = counters
        self.sink = sink
        self.awaitingLimit = awaitingLimit
        self.onWorkerCount = onWorkerCount
        heldReplies = HeldReplies(limit: configuration.gatewayLimits.maxFramesInFlight)
        let signals = PipelineSignals(wake: wake, threads: configuration.threadStarter)
        self.signals = signals
        hot = HotCounters(counters)
        // Registered up front so that they are exported (and alertable) at 0.
        for id in [
            CounterID.fsyncErrors, .compactions, .compactionsFailed, .repliesHeld, .replicationRefusals,
        ] {
            _ = counters.handle(id)
        }
        for endpoint in [ReplyEndpoint.ingest, .queries] {
            _ = counters.handle(.requestsDiscarded, label: "\(endpoint)")
        }
        for code in [ErrorReply.Code.malformedFrame, .unknownKind, .frameTooLarge, .wrongFrameCount] {
            _ = counters.handle(.framesInvalid, label: "\(code)")
        }
        for step in LogRecord.Kind.moveSteps {
            _ = counters.handle(.moveSteps, label: step.name)
        }
        for kind in Query.operatorKindNames {
            _ = counters.handle(.authDenied, label: kind)
        }
        for limit in GatewayLimits.Limit.allCases {
            _ = counters.handle(.limitsRefused, label: "\(limit)")
        }
        let metrics = ServiceMetrics()
        self.metrics = metrics
        startedMonotonic = ServiceClock.monotonicMilliseconds()
        compaction.lastStartedMonotonic = startedMonotonic

        log = try Self.openLog(
            configuration: configuration,
            logger: logger,
            onDurable: wake,
            onFatal: { error in signals.reportFatal(error) },
            onGroupCommit: { commit in metrics.groupCommitted(commit) }
        )
        frontier = DurabilityFrontier(log: log, gate: gate)
        let recovered = try Self.recover(log: log, configuration: configuration, counters: counters, logger: logger)
        engine = recovered.engine
        clock = recovered.clock
        terms = recovered.terms
        if engine.topology.workerCount != configuration.workerCount {
            logger.warning(
                "the configured worker count differs from the log's; the log's stands (change it with receiptctl rebalance)",
                metadata: [
                    "worker.count.configured": "\(configuration.workerCount)",
                    "worker.count.log": "\(engine.topology.workerCount)",
                    "move.epoch": "\(engine.topology.moveEpoch)",
                ]
            )
        }
        // The engine's totals are kept in snapshots and replayed: only what is dropped from now on
        // is new to this process's counters (else every restart would look like fresh drops).
        engineCountersSampled = engine.counters
        metrics.recoveryDuration.record(Double(ServiceClock.monotonicMilliseconds() - startedMonotonic) / 1000)

        let publisherRun = UInt64(bitPattern: Int64(Date().timeIntervalSince1970 * 1_000_000))
        statusPublisher = StatusPublisher(
            sink: sink,
            windowMilliseconds: configuration.coalesceMilliseconds,
            publisherRun: publisherRun,
            onPublished: { [counters, updatesPublished = hot.updatesPublished] count in
                counters.increment(updatesPublished, by: count)
            },
            onReadStatesPublished: { [counters, readStatesPublished = counters.handle(.readStatesPublished)] count in
                counters.increment(readStatesPublished, by: count)
            }
        )
        reportWorkerCountIfChanged()
    }

    // MARK: - Driving

    /// Whether ingest should be read: false while too many batches wait for the log (or the
    /// log failed), so that ZeroMQ's high-water marks push back on gateways.
    var acceptsIngest: Bool {
        awaiting.count < awaitingLimit && signals.fatalError == nil
    }

    /// Milliseconds until a coalescing window closes or held replies are tried again, or nil
    /// if nothing waits for a time.
    func millisecondsUntilDue(now: Int64) -> Int64? {
        let publishing = statusPublisher.millisecondsUntilDue(now: now)
        guard !heldReplies.isEmpty else { return publishing }
        return min(publishing ?? Self.heldReplyRetryMilliseconds, Self.heldReplyRetryMilliseconds)
    }

    /// Whether to take a request from a ROUTER peer (`frames` starts with its routing id): not
    /// while the peer has its limit of replies held, since it reads none of them and the
    /// answer could not be held too. Nothing of a discarded request is applied; the peer's
    /// re-send is answered once it reads again. Counted, and logged at most once a second.
    func admits(_ frames: [UnsafeRawBufferPointer], on endpoint: ReplyEndpoint) -> Bool {
        guard !heldReplies.isEmpty, let routingID = frames.first else { return true }
        let peer = HeldReplies.Peer(endpoint: endpoint, routingID: Array(routingID))
        guard heldReplies.count(for: peer) >= heldReplies.limit else { return true }
        counters.increment(.requestsDiscarded, label: "\(endpoint)")
        if let unlogged = discardsLogged.admit(endpoint) {
            logger.warning(
                "request discarded unread: the peer reads none of its replies",
                metadata: [
                    "endpoint": "\(endpoint)", "replies.held": "\(heldReplies.count(for: peer))",
                    "requests.discarded_unlogged": "\(unlogged)",
                ]
            )
        }
        return false
    }

    /// Does everything that is due: publishes and answers what became durable, takes a
    /// finished compaction, publishes coalesced updates whose window closed, starts a
    /// compaction by size or time, samples the gauges.
    /// - Parameter now: Monotonic milliseconds.
    /// - Throws: `ServiceError` once the log has failed: the worker must stop.
    func advance(now: Int64) throws(ServiceError) {
        try stopIfLogFailed()
        sendHeldReplies()
        completeDurable(now: now)
        announceToNewFollowers()
        finishCompactionIfDone(now: now)
        statusPublisher.flushDue(now: now)
        startCompactionIfDue(now: now)
        sampleGaugesIfDue(now: now)
    }

    /// An append or sync failed: stop at once, acknowledging nothing more (fsyncgate: a later
    /// sync may falsely succeed). Restart recovers from the log.
    private func stopIfLogFailed() throws(ServiceError) {
        guard let fatal = signals.fatalError else { return }
        counters.increment(.fsyncErrors)
        logger.critical("log failed; stopping without acknowledging further batches", metadata: ["error": "\(fatal)"])
        throw ServiceError(.storage, "the log failed", cause: fatal)
    }

    // MARK: - Durability

    /// Whether what was appended so far is durable and nothing waits for the log (after a log
    /// failure, never): what depends on it may go out at once instead of queueing behind.
    private var isEverythingDurable: Bool {
        awaiting.isEmpty && signals.fatalError == nil && log.appendedPosition <= frontier.position
    }

    /// Queues a reply to go out once everything appended so far is durable (at once if it is).
    ///
    /// After a log failure nothing goes out: the engine may hold a batch whose append failed.
    func reply(_ frames: [[UInt8]], on endpoint: ReplyEndpoint) {
        if isEverythingDurable {
            send(frames, on: endpoint)
        } else {
            awaiting.append(
                AwaitingDurability(
                    position: log.appendedPosition,
                    changes: Publication(),
                    reply: PendingReply(endpoint: endpoint, frames: frames)
                )
            )
        }
    }

    /// Publishes each user's current state (in the first conversation of theirs served here) on
    /// their topic when a subscriber started to follow it, behind everything waiting for the log.
    ///
    /// A device subscribes and then takes its snapshot; when the snapshot is answered before the
    /// subscription reaches the XPUB, a read in between is in neither the snapshot nor any
    /// update the device gets. The announcement is numbered after that read (or in a new run, if
    /// nothing was numbered meanwhile), so such a device sees a gap and takes a new snapshot;
    /// one whose snapshot is newer sees a number it has, one whose snapshot is current sees the
    /// state it holds.
    private func announceToNewFollowers() {
        let followers = sink.takeNewFollowers()
        guard !followers.isEmpty, configuration.publishesReadStates, statusPublisher.numbersReadStates() else { return }
        var announced: [ReadStateChange] = []
        var seen = Set<String>()
        let now = clock.now()
        for user in followers where seen.insert(user).inserted {
            guard let state = engine.firstReadState(of: user) else { continue }
            announced.append(ReadStateChange(user: user, state: state, time: now))
        }
        guard !announced.isEmpty else { return }
        if isEverythingDurable {
            statusPublisher.submit(readStates: announced)
        } else {
            awaiting.append(
                AwaitingDurability(
                    position: log.appendedPosition,
                    changes: Publication(readStates: announced),
                    reply: nil
                )
            )
        }
    }

    /// Publishes the changes and then sends the replies of everything the log has made durable.
    ///
    /// Publishing first means that by the time a gateway holds an acknowledgement, the status
    /// update it caused has been handed to the sink (in receiptd, the publishing thread's
    /// queue, which sends within microseconds).
    func completeDurable(now: Int64) {
        guard signals.fatalError == nil else { return }
        let durable = frontier.position
        let nowNanoseconds = ServiceClock.monotonicNanoseconds()
        completedNanoseconds = nowNanoseconds
        while let item = awaiting.first, item.position <= durable {
            _ = awaiting.popFirst()
            if !item.changes.statuses.isEmpty {
                statusPublisher.submit(item.changes.statuses, keys: item.changes.keys, now: now)
            }
            if !item.changes.readStates.isEmpty {
                statusPublisher.submit(readStates: item.changes.readStates)
            }
            if let reply = item.reply {
                send(reply.frames, on: reply.endpoint)
            }
            if item.receivedNanoseconds > 0 {
                metrics.ackLatency.recordNanoseconds(nowNanoseconds - item.receivedNanoseconds)
            }
            if let trace = item.trace {
                recordStages(trace, position: item.position, completed: nowNanoseconds)
            }
        }
    }

    /// Records the stages of a traced frame just answered (none if the timeline lost its commit).
    private func recordStages(_ trace: IngestStageTrace, position: LogPosition, completed: UInt64) {
        guard let commit = metrics.commitTimeline.commit(covering: position) else { return }
        let stages = trace.stages(writtenBy: commit, completed: completed, replied: ServiceClock.monotonicNanoseconds())
        for (stage, nanoseconds) in stages {
            metrics.record(stage, nanoseconds: nanoseconds)
        }
    }

    /// Called between received frames: publishes and answers what became durable meanwhile,
    /// at most every `completionIntervalNanoseconds`.
    ///
    /// A turn of queued frames takes far longer than a group commit; holding the updates and
    /// replies until its end delayed them by the rest of the turn and filled the gateways'
    /// in-flight windows, so their next frames came in a burst that made the next turn longer.
    /// Completing after every frame cut the latency as much but sent updates and replies a
    /// frame at a time, for about a quarter more CPU at saturation.
    func completeDurableIfDue() {
        guard let oldest = awaiting.first, oldest.position <= frontier.position else { return }
        let now = ServiceClock.monotonicNanoseconds()
        guard now &- completedNanoseconds >= Self.completionIntervalNanoseconds else { return }
        completeDurable(now: Int64(now / 1_000_000))
    }

    /// Sends a reply now, or holds it while its ROUTER cannot take it (or holds earlier replies
    /// to the same peer); counts one whose peer went away.
    func send(_ frames: [[UInt8]], on endpoint: ReplyEndpoint) {
        if !heldReplies.isEmpty {
            let peer = HeldReplies.Peer(endpoint: endpoint, routingID: frames[0])
            if heldReplies.count(for: peer) > 0 {
                hold(frames, for: peer)
                return
            }
        }
        switch sink.send(frames, on: endpoint) {
        case .sent:
            break
        case .wouldBlock:
            hold(frames, for: HeldReplies.Peer(endpoint: endpoint, routingID: frames[0]))
        case .unroutable(let error):
            counters.increment(.repliesDropped, label: "unroutable")
            logger.debug("reply not delivered", metadata: ["error": "\(error)"])
        }
    }

    /// Holds a reply behind the peer's earlier ones, counting it.
    private func hold(_ frames: [[UInt8]], for peer: HeldReplies.Peer) {
        counters.increment(.repliesHeld)
        heldReplies.hold(frames, for: peer)
    }

    /// Offers the held replies to their ROUTERs again.
    func sendHeldReplies() {
        guard !heldReplies.isEmpty else { return }
        let gone = heldReplies.retry { peer, frames in sink.send(frames, on: peer.endpoint) }
        if gone > 0 {
            counters.increment(.repliesDropped, label: "unroutable", by: gone)
        }
    }

    /// Samples the gauges about once a second.
    private func sampleGaugesIfDue(now: Int64) {
        guard now - gaugesSampledMonotonic >= ServiceMetrics.gaugeIntervalMilliseconds else { return }
        gaugesSampledMonotonic = now
        let engineCounters = engine.counters
        metrics.sample(engine: engineCounters, before: engineCountersSampled, awaiting: awaiting.count, log: log)
        engineCountersSampled = engineCounters
        reportWorkerCountIfChanged()
    }

    /// Reports the log's worker count (metrics, `onWorkerCount`) if it changed since last time.
    private func reportWorkerCountIfChanged() {
        let count = engine.topology.workerCount
        guard count != reportedWorkerCount else { return }
        reportedWorkerCount = count
        metrics.recordWorkerInfo(index: configuration.workerIndex, count: count)
        onWorkerCount(count)
    }

    // MARK: - Shutdown

    /// Makes everything accepted durable, publishes and answers it (coalesced updates too),
    /// and waits for a running compaction. The caller stops intake first.
    func shutDown() throws(ServiceError) {
        logger.info("stopping", metadata: ["shutdown.awaiting_batches": "\(awaiting.count)"])
        do {
            try log.flush()
        } catch {
            throw ServiceError(.storage, "cannot make the last batches durable", cause: error)
        }
        let now = ServiceClock.monotonicMilliseconds()
        completeDurable(now: now)
        statusPublisher.flushDue(now: nil)
        let deadline = ServiceClock.monotonicMilliseconds() + Self.heldReplyShutdownMilliseconds
        while !heldReplies.isEmpty, ServiceClock.monotonicMilliseconds() < deadline {
            usleep(1000)
            sendHeldReplies()
        }
        let undelivered = heldReplies.dropAll()
        if undelivered > 0 {
            counters.increment(.repliesDropped, label: "shutdown", by: undelivered)
            logger.warning(
                "replies not delivered at shutdown: their peers read none",
                metadata: ["replies": "\(undelivered)"]
            )
        }
        while compaction.isRunning {
            usleep(10_000)
            finishCompactionIfDone(now: ServiceClock.monotonicMilliseconds())
        }
    }

    /// Closes the log (after `shutDown`, or after a failure).
    func close() {
        do {
            try log.close()
        } catch {
            logger.error("closing the log failed", metadata: ["error": "\(error)"])
        }
    }
}
