import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// The one thread that owns a client's sockets (libzmq sockets belong to one thread).
///
/// Callers reach it through ``ClientInbox``; it answers through their continuations. Per
/// worker, and per member of a replicated ordinal (``PrimaryTracker`` picks the one used), it
/// holds a DEALER to the ingest endpoint and one to the query endpoint, and every
/// request carries a tag frame before the empty delimiter, which the worker's ROUTER returns
/// with the reply: replies are matched by tag, so they may come in any order, late, or twice.
/// What goes out, when, and to which member is decided by three socket-free schedulers that
/// take the time from the loop: ``IngestScheduler`` (frames), ``QueryScheduler`` (queries) and
/// ``SubscriptionScheduler`` (subscriptions and their snapshot repairs). The loop keeps the
/// sockets, the poll and the callers' continuations.
final class ClientLoop {
    typealias Instant = ContinuousClock.Instant

    let configuration: ReceiptsClient.Configuration
    let logger: Logger
    let inbox: ClientInbox
    let statistics: ClientStatistics
    /// The durable queue of events taken in, if the client has one.
    let outbox: Outbox?
    let clock = ContinuousClock()
    let context: ZMQContext

    /// Per worker reached so far, by ordinal, and per member of its ordinal: the DEALERs to its
    /// ingest and query endpoints.
    var ingestSockets: [[LazyConnection]] = []
    var querySockets: [[LazyConnection]] = []
    /// The member each ordinal is served by, for ingest and queries alike.
    let primaries: PrimaryTracker
    /// The events' way to the workers; it sends and answers through this loop.
    private(set) lazy var scheduler = IngestScheduler(
        configuration: configuration,
        primaries: primaries,
        statistics: statistics,
        logger: logger,
        environment: self
    )
    /// Callers of `send` waiting for their outcomes, by request id.
    var sendReplies: [UInt64: Reply<[EventOutcome]>] = [:]
    /// The queries on the wire; they go out and are answered through this loop.
    private(set) lazy var queries = QueryScheduler(
        configuration: configuration,
        primaries: primaries,
        statistics: statistics,
        environment: self
    )
    /// The SUB sockets every subscription shares.
    let updateListeners: UpdateListeners
    /// The subscriptions' repairs; it asks for snapshots and listens through this loop.
    private(set) lazy var subscriptions = SubscriptionScheduler(
        configuration: configuration,
        statistics: statistics,
        logger: logger,
        environment: self
    )
    /// Callers of `flush`, by request id.
    var flushes: [UInt64: Reply<Void>] = [:]
    /// Set when sockets were added or removed, so the poll set is rebuilt.
    var pollSetChanged = true
    private var running = true

    init(
        configuration: ReceiptsClient.Configuration,
        logger: Logger,
        inbox: ClientInbox,
        statistics: ClientStatistics,
        outbox: Outbox?
    ) throws(ZMQError) {
        self.configuration = configuration
        self.logger = logger
        self.inbox = inbox
        self.statistics = statistics
        self.outbox = outbox
        primaries = PrimaryTracker(configuration: configuration, statistics: statistics)
        let context = try ZMQContext()
        self.context = context
        updateListeners = UpdateListeners(configuration: configuration, context: context, logger: logger)
    }

    /// Runs until a shutdown command; every socket is closed and every waiter answered on return.
    func run() {
        do {
            try openSockets()
            if let outbox, !outbox.recovered.isEmpty {
                // Taken in before a restart and never answered (so durable already): they go first.
                logger.info("re-sending the outbox", metadata: ["receipts.events": "\(outbox.recovered.count)"])
                scheduler.startSend(id: 0, events: outbox.recovered, outboxPosition: .zero, now: clock.now)
            }
            try serve()
        } catch {
            logger.error("receipts client loop stopped", metadata: ["error": "\(error)"])
        }
        stop()
    }

    private func openSockets() throws(ZMQError) {
        for ordinal in configuration.cluster.ordinals {
            let members = configuration.cluster.members(of: ordinal)
            guard !members.isEmpty else { break }
            try addWorkerSockets(members)
        }
    }

    /// Makes (without connecting) the ingest and query DEALERs of the next ordinal's members;
    /// none if one cannot be made.
    private func addWorkerSockets(_ members: [Cluster.Worker]) throws(ZMQError) {
        var ingest: [LazyConnection] = []
        var query: [LazyConnection] = []
        do {
            for member in members {
                ingest.append(LazyConnection(socket: try makeDealer(), endpoint: member.ingest))
                query.append(LazyConnection(socket: try makeDealer(), endpoint: member.query))
            }
        } catch {
            for connection in ingest + query { connection.socket.close() }
            throw error
        }
        ingestSockets.append(ingest)
        querySockets.append(query)
        pollSetChanged = true
    }

    /// A DEALER without high-water marks, CURVE set if configured; closed again if a setting fails
    /// (an open socket would keep `zmq_ctx_term` waiting).
    private func makeDealer() throws(ZMQError) -> ZMQSocket {
        let socket = try ZMQSocket(context: context, type: .dealer)
        do {
            try socket.setSendHighWaterMark(0)
            try socket.setReceiveHighWaterMark(0)
            try configuration.secure(socket)
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    /// Makes sure the client has sockets for a worker, adding those of every ordinal up to it
    /// that the cluster can name (a NOT_OWNER answer may name a worker above the routing count:
    /// a scale-up's new worker). The sockets connect at their first use.
    /// - Parameter ordinal: The worker.
    /// - Returns: false if the cluster does not know the worker's endpoints (or its sockets
    ///   could not be made).
    func reach(_ ordinal: Int) -> Bool {
        guard ordinal >= 0 else { return false }
        while ingestSockets.count <= ordinal {
            let members = configuration.cluster.members(of: ingestSockets.count)
            guard !members.isEmpty else { return false }
            do {
                try addWorkerSockets(members)
            } catch {
                logger.warning(
                    "cannot make a worker's sockets",
                    metadata: ["receipts.worker": "\(ingestSockets.count)", "error": "\(error)"]
                )
                return false
            }
        }
        return true
    }

    /// The worker that owns a conversation under the cluster's routing count (the sockets may
    /// reach further, see ``reach(_:)``).
    func owner(of conversation: String) -> Int {
        Partitioning.owner(of: conversation, workerCount: configuration.cluster.workerCount)
    }

    /// What each poll item is.
    private enum PollSource {
        case doorbell
        case ingest(Int, member: Int)
        case query(Int, member: Int)
        case updates(worker: Int, ZMQSocket)
        case connections(UpdateListeners.Listener)
    }

    private func serve() throws(ZMQError) {
        var poller = ZMQPoller()
        var sources: [PollSource] = []
        while running {
            if pollSetChanged {
                (poller, sources) = makePollSet()
                pollSetChanged = false
            }
            let now = clock.now
            scheduler.pump(now: now)
            scheduler.expireDeadlines(now: now)
            queries.expire(now: now)
            subscriptions.runTimers(now: now)
            answerFlushes()
            let timeout = pollTimeout(now: clock.now)
            guard try poller.poll(timeoutMilliseconds: timeout) > 0 else { continue }
            for (index, source) in sources.enumerated() where poller.isReadable(index) {
                switch source {
                case .doorbell:
                    inbox.doorbell.drain()
                    for command in inbox.take() { handle(command) }
                case .ingest(let worker, let member):
                    try receiveIngestReplies(worker: worker, member: member)
                case .query(let worker, let member):
                    try receiveQueryReplies(worker: worker, member: member)
                case .updates(let worker, let socket):
                    try receiveUpdates(worker: worker, socket: socket)
                case .connections(let listener):
                    if try updateListeners.connected(listener) {
                        subscriptions.reconnected(worker: listener.worker, now: clock.now)
                    }
                }
                if !running { return }
            }
        }
    }

    private func makePollSet() -> (ZMQPoller, [PollSource]) {
        var poller = ZMQPoller()
        var sources: [PollSource] = []
        poller.add(fileDescriptor: inbox.doorbell.fileDescriptor)
        sources.append(.doorbell)
        for worker in ingestSockets.indices {
            for member in ingestSockets[worker].indices {
                poller.add(ingestSockets[worker][member].socket)
                sources.append(.ingest(worker, member: member))
                poller.add(querySockets[worker][member].socket)
                sources.append(.query(worker, member: member))
            }
        }
        for listener in updateListeners.listeners {
            poller.add(listener.socket)
            sources.append(.updates(worker: listener.worker, listener.socket))
            poller.add(listener.monitor)
            sources.append(.connections(listener))
        }
        return (poller, sources)
    }

    /// Milliseconds until the next timer (linger, acknowledgement, query and its re-sending,
    /// repair), at most 100.
    private func pollTimeout(now: Instant) -> Int {
        var next = now + .milliseconds(100)
        if let due = scheduler.nextDeadline() { next = min(next, due) }
        if let due = queries.nextDeadline { next = min(next, due) }
        if let due = subscriptions.nextTimer { next = min(next, due) }
        guard next > now else { return 0 }
        let milliseconds = (next - now).components
        return Int(milliseconds.seconds * 1000 + milliseconds.attoseconds / 1_000_000_000_000_000) + 1
    }

    // MARK: - Commands

    private func handle(_ command: ClientCommand) {
        switch command {
        case .send(let id, let events, let outboxPosition, let reply):
            if let reply { sendReplies[id] = reply }
            scheduler.startSend(id: id, events: events, outboxPosition: outboxPosition, now: clock.now)
        case .query(let id, let worker, let query, let deadline, let reply):
            queries.start(query, worker: worker, deadline: deadline, completion: .caller(id: id, reply), now: clock.now)
        case .subscribe(let id, let topic, let output):
            subscriptions.startStatuses(id: id, topic: topic, output: output, now: clock.now)
        case .subscribeReadState(let id, let topic, let output):
            subscriptions.startReadStates(id: id, topic: topic, output: output, now: clock.now)
        case .cancel(let id):
            // Always behind its request in the inbox (see `RequestTicket`); nothing to do if the
            // request was answered meanwhile.
            if scheduler.cancelSend(id: id, now: clock.now) {
                // Unsent events were withdrawn; sent ones are still acknowledged, unanswered.
                sendReplies.removeValue(forKey: id)?.resume(
                    returning: .failure(ReceiptsClientError(.cancelled, "the send was cancelled"))
                )
            } else if !queries.cancel(id: id), let reply = flushes.removeValue(forKey: id) {
                reply.resume(returning: .failure(ReceiptsClientError(.cancelled, "the flush was cancelled")))
            }
        case .unsubscribe(let id):
            subscriptions.end(id: id)
        case .flush(let id, let reply):
            flushes[id] = reply
        case .shutdown:
            running = false
        }
    }

    /// The tag frame of a request.
    static func tagFrame(_ tag: UInt64) -> [UInt8] {
        withUnsafeBytes(of: tag.littleEndian) { Array($0) }
    }

    /// The tag of a reply `[tag, "", body]`, or nil for anything else.
    static func tag(of frames: [UnsafeRawBufferPointer]) -> UInt64? {
        guard frames.count == 3, frames[0].count == 8, frames[1].isEmpty else { return nil }
        return UInt64(littleEndian: frames[0].loadUnaligned(as: UInt64.self))
    }

    private func answerFlushes() {
        guard !flushes.isEmpty, scheduler.isIdle else { return }
        for reply in flushes.values { reply.resume(returning: .success(())) }
        flushes = [:]
    }

    /// Answers every waiter with `.closed`, ends subscriptions and closes the sockets.
    private func stop() {
        running = false
        for command in inbox.close() {
            switch command {
            case .send(_, _, _, let reply):
                reply?.resume(returning: .failure(Self.closedError))
            case .query(_, _, _, _, let reply):
                reply.resume(returning: .failure(Self.closedError))
            case .flush(_, let reply):
                reply.resume(returning: .failure(Self.closedError))
            case .subscribe(_, _, let output):
                output.finish()
            case .subscribeReadState(_, _, let output):
                output.finish()
            case .cancel, .unsubscribe, .shutdown:
                break
            }
        }
        for reply in sendReplies.values { reply.resume(returning: .failure(Self.closedError)) }
        sendReplies = [:]
        queries.failAll(Self.closedError)
        for reply in flushes.values { reply.resume(returning: .failure(Self.closedError)) }
        flushes = [:]
        subscriptions.endAll()
        updateListeners.close()
        for connection in (ingestSockets + querySockets).joined() { connection.socket.close() }
        context.terminate()
        outbox?.close()
    }

    static let closedError = ReceiptsClientError(.closed, "the client was shut down")
}
