import Foundation
public import Logging
import ReceiptLog
public import ReceiptsCore
public import ReceiptsWire
import Synchronization

/// A gateway's connection to a receiptd cluster: sends events to their owners with batching
/// and retries, answers typed queries, and follows status updates with Clone-pattern repair.
///
/// One background thread owns every socket; the methods are `async` and safe to call from any
/// task. Sending is at-least-once on the wire with stable event ids, so with receiptd's
/// de-duplication each event is applied once: a frame that is not acknowledged in time, is
/// answered UNAVAILABLE, or was lost with a restarted worker goes again with the same ids,
/// until it is acknowledged. For a replicated ordinal (``Cluster/members``) it talks to the
/// primary, following NOT_PRIMARY answers and leaving a silent primary for the other members,
/// and re-sends what was in flight there to the new one: callers see none of it.
///
/// ```swift
/// let client = try ReceiptsClient(.init(cluster: Cluster(workers: [.init(dataDirectory: "receiptd-data")])),
///                                 logger: Logger(label: "gateway"))
/// try await client.send([.messageSent(conversation: "c1", message: "m1", sender: "alice", isSystem: false)])
/// ```
public final class ReceiptsClient: Sendable {
    /// The configuration the client was made with.
    public let configuration: Configuration
    private let inbox: ClientInbox
    let statistics = ClientStatistics()
    private let outbox: Outbox?
    private let sequence: Mutex<UInt64>
    private let requestIDs = Atomic<UInt64>(0)
    private let completion = LoopCompletion()

    /// Starts the client's thread and connects to every worker (libzmq connects in the
    /// background, so a worker that is not up yet is reached once it is).
    /// - Parameters:
    ///   - configuration: The cluster and the batching and retry settings.
    ///   - logger: For connection trouble (warning) and retries (debug).
    /// - Throws: ``ReceiptsClientError`` `.invalidArgument` for a configuration that cannot
    ///   work, `.transport` if a socket or pipe cannot be made.
    public init(_ configuration: Configuration, logger: Logger) throws(ReceiptsClientError) {
        try configuration.validate()
        self.configuration = configuration
        let inbox: ClientInbox
        do {
            inbox = try ClientInbox()
        } catch {
            throw ReceiptsClientError(.transport, "cannot make the client's inbox", cause: error)
        }
        self.inbox = inbox
        let outbox = try configuration.outboxDirectory.map { (directory) throws(ReceiptsClientError) in
            try Outbox(
                directory: directory,
                source: configuration.source,
                firstSequence: configuration.firstSequence,
                logger: logger,
                onDurabilityChange: { inbox.doorbell.ring() }
            )
        }
        self.outbox = outbox
        sequence = Mutex(outbox?.nextSequence ?? configuration.firstSequence)
        do {
            // Made here so that set-up errors reach the caller, then handed to its thread for good.
            nonisolated(unsafe) let loop = try ClientLoop(
                configuration: configuration,
                logger: logger,
                inbox: inbox,
                statistics: statistics,
                outbox: outbox
            )
            let completion = self.completion
            Thread {
                nameCurrentThread("receipts-client")
                loop.run()
                completion.finish()
            }.start()
        } catch {
            throw ReceiptsClientError(.transport, "cannot start the client", cause: error)
        }
    }

    deinit {
        inbox.post(.shutdown)
    }

    /// The sequence the next event numbered by this client gets: persist it with
    /// ``Configuration/source`` to continue after a restart without reusing an id.
    public var nextSequence: UInt64 {
        sequence.withLock { $0 }
    }

    /// What the client has done so far.
    public var currentStatistics: Statistics {
        statistics.snapshot
    }

    /// Events in the outbox that no worker has answered yet (0 without an outbox).
    public var unansweredInOutbox: Int {
        outbox?.unanswered ?? 0
    }

    // MARK: - Sending

    /// Sends events, numbered from ``Configuration/source`` and ``nextSequence``, and waits for
    /// their outcomes.
    ///
    /// Concurrent calls share frames. Each event goes to the worker that owns its conversation
    /// (user-wide events to every worker, their outcome merged). If the queues are full the
    /// call waits for room. Cancelling stops the wait: events not yet sent are withdrawn, events
    /// already sent are still applied.
    /// - Parameter events: What happened, in order.
    /// With an outbox, the events are fsynced there first, and a cancelled call's events are
    /// still delivered (from the outbox after a restart if need be).
    /// - Returns: One outcome per event, in order. `duplicate` means the event was applied
    ///   before (by an earlier attempt that was not acknowledged, or an earlier send of its id).
    /// - Throws: ``ReceiptsClientError``: `.rejected` or `.malformedReply` if a worker refused
    ///   or garbled a whole frame, `.unavailable` if the outbox failed, `.cancelled`, `.closed`.
    public func send(_ events: [EventKind]) async throws(ReceiptsClientError) -> [EventOutcome] {
        try await sendNumbering(events.map { ($0, nil) })
    }

    /// Sends one event and waits for its outcome; see ``send(_:)``.
    /// - Parameters:
    ///   - event: What happened.
    ///   - clientTime: For a receipt queued offline on the device: when it happened there
    ///     (receiptd clamps it into [message sent, now]).
    public func send(_ event: EventKind, clientTime: Timestamp? = nil) async throws(ReceiptsClientError) -> EventOutcome
    {
        let outcomes = try await sendNumbering([(event, clientTime)])
        return outcomes[0]
    }

    /// Turns the sharing of a user's reads on or off, everywhere or in one conversation; see
    /// ``send(_:clientTime:)``. A read is shared only when both settings allow it, and either
    /// applies to reads made from then on; the user's own devices see every read either way.
    /// - Parameters:
    ///   - user: The user.
    ///   - shareReads: Whether others see their reads (false: deliveries only).
    ///   - conversation: The one conversation (the user must be a member); nil for the user's
    ///     global setting, which goes to every worker.
    public func setReceiptPrivacy(
        user: String,
        shareReads: Bool,
        in conversation: String? = nil
    ) async throws(ReceiptsClientError) -> EventOutcome {
        guard let conversation else { return try await send(.receiptPrivacy(user: user, shareReads: shareReads)) }
        return try await send(
            .conversationReceiptPrivacy(conversation: conversation, user: user, shareReads: shareReads)
        )
    }

    /// Takes events into the outbox and returns once they are fsynced there, without waiting
    /// for a worker: the client delivers them in the background, and a client started again on
    /// the same outbox after a crash delivers what was not answered (the seeds' "receipts queue
    /// offline and sync on reconnect", on the gateway side). ``flush()`` waits for delivery.
    /// - Parameter events: What happened, in order.
    /// - Returns: The ids the events were given.
    /// - Throws: ``ReceiptsClientError`` `.invalidArgument` without an outbox
    ///   (``Configuration/outboxDirectory``), `.unavailable` if the outbox failed, `.closed`.
    @discardableResult
    public func enqueue(_ events: [EventKind]) async throws(ReceiptsClientError) -> [EventID] {
        guard let outbox else {
            throw ReceiptsClientError(.invalidArgument, "enqueue needs an outbox (Configuration.outboxDirectory)")
        }
        let id = requestIDs.wrappingAdd(1, ordering: .relaxed).newValue
        var taken: (events: [Event], outboxPosition: LogPosition?) = ([], nil)
        let posted = try inbox.post { () throws(ReceiptsClientError) -> ClientCommand in
            taken = try takeIn(events.map { ($0, nil) })
            return .send(id: id, events: taken.events, outboxPosition: taken.outboxPosition, reply: nil)
        }
        guard posted, let position = taken.outboxPosition else { throw ClientLoop.closedError }
        try await outbox.durability.wait(for: position)
        return taken.events.map(\.id)
    }

    /// Numbers events, sends them and waits for their outcomes. With an outbox they go out even
    /// if the task was cancelled already, as they would once taken in.
    private func sendNumbering(_ events: [(EventKind, Timestamp?)]) async throws(ReceiptsClientError) -> [EventOutcome]
    {
        try await request(evenIfCancelled: outbox != nil) { id, reply throws(ReceiptsClientError) in
            let taken = try takeIn(events)
            return .send(id: id, events: taken.events, outboxPosition: taken.outboxPosition, reply: reply)
        }
    }

    /// Sends events whose ids the caller chose (re-sending a stored event, tools); see ``send(_:)``.
    ///
    /// The caller keeps the ids within the workers' anti-replay window (see
    /// ``Configuration/replayWindow``): an id below its source's window is answered
    /// `rejected` with reason `outsideReplayWindow`, since the worker cannot tell whether it
    /// applied that event; it is never reported as `duplicate` or as a success.
    public func send(identified events: [Event]) async throws(ReceiptsClientError) -> [EventOutcome] {
        try await request { id, reply in .send(id: id, events: events, outboxPosition: nil, reply: reply) }
    }

    /// Numbers events and appends them to the outbox, if there is one (the loop sends them once
    /// they are durable there). Called under the inbox's lock while the command is made
    /// (``ClientInbox/post(_:)``), so events reach the loop, and each worker's queue, in the
    /// order they were numbered: otherwise a caller could post events numbered more than
    /// ``Configuration/replayWindow`` after those of a caller still on its way, which a worker
    /// would then refuse as outside its anti-replay window.
    /// - Returns: The numbered events and where their outbox record ends.
    /// - Throws: ``ReceiptsClientError`` `.unavailable` if the outbox refused them.
    private func takeIn(
        _ events: [(EventKind, Timestamp?)]
    ) throws(ReceiptsClientError) -> (events: [Event], outboxPosition: LogPosition?) {
        let numbered = number(events)
        return (numbered, try outbox?.append(numbered))
    }

    /// Gives events ids: this client's source and the next sequences.
    private func number(_ events: [(EventKind, Timestamp?)]) -> [Event] {
        let first = sequence.withLock { next in
            defer { next += UInt64(events.count) }
            return next
        }
        return events.enumerated().map { offset, event in
            Event(
                id: EventID(source: configuration.source, sequence: first + UInt64(offset)),
                clientTime: event.1,
                kind: event.0
            )
        }
    }

    /// Waits until everything sent before the call is acknowledged (or failed).
    /// - Throws: ``ReceiptsClientError`` `.closed` or `.cancelled`.
    public func flush() async throws(ReceiptsClientError) {
        try await request { id, reply in .flush(id: id, reply: reply) }
    }

    // MARK: - Subscribing

    /// Status updates of a conversation, a topic prefix or everything, from every worker that
    /// publishes them.
    ///
    /// A one-conversation subscription starts with the conversation's current statuses (from a
    /// snapshot). For every conversation it follows, a late join, a sequence gap and a new
    /// publisher run (a restarted worker) are repaired from a snapshot: the consumer sees each
    /// message's statuses in order, never an older one after a newer one. A consumer that
    /// falls more than ``Configuration/subscriptionBuffer`` updates behind gets the newest
    /// statuses, coalesced, instead of an unbounded queue. The sequence ends when the consumer
    /// stops iterating or the client shuts down.
    /// - Parameter topic: What to follow.
    public func subscribe(to topic: SubscriptionTopic) -> StatusUpdates {
        StatusUpdates(stream: subscription { id, output in .subscribe(id: id, topic: topic, output: output) })
    }

    /// A user's own read state in each of their conversations, on every worker: pushed to all
    /// of the user's devices (their unread badges) whenever it changes, private reads included.
    ///
    /// It starts with the user's current state in each of their conversations (each worker's
    /// snapshot), then follows the user's topic. A sequence gap, a new publisher run (a
    /// restarted worker) and updates the consumer had no room for are repaired from that
    /// worker's snapshot. The consumer gets a state per conversation only when it differs from
    /// the last one it got; a snapshot's states carry no time. New messages change no state
    /// here (the gateway's conversation traffic tells the device of them). The sequence ends
    /// when the consumer stops iterating or the client shuts down.
    /// - Parameter topic: The user.
    public func subscribe(to topic: ReadStateTopic) -> ReadStateUpdates {
        ReadStateUpdates(
            stream: subscription { id, output in .subscribeReadState(id: id, topic: topic, output: output) }
        )
    }

    /// A new subscription's stream, whose command the client's thread gets (`command` makes it
    /// from the subscription's id and the stream's continuation); ending the stream unsubscribes.
    private func subscription<Element: Sendable>(
        _ command: (UInt64, AsyncStream<Element>.Continuation) -> ClientCommand
    ) -> AsyncStream<Element> {
        let id = requestIDs.wrappingAdd(1, ordering: .relaxed).newValue
        let (stream, output) = AsyncStream.makeStream(
            of: Element.self,
            bufferingPolicy: .bufferingOldest(configuration.subscriptionBuffer)
        )
        let inbox = self.inbox
        output.onTermination = { _ in inbox.post(.unsubscribe(id: id)) }
        if !inbox.post(command(id, output)) { output.finish() }
        return stream
    }

    // MARK: - Queries

    /// Asks one worker a query and returns its reply as it is, error replies included (for
    /// tools; the typed methods route by owner, follow NOT_OWNER and throw on errors). For a
    /// replicated ordinal it asks the member the client talks to now and follows NOT_PRIMARY
    /// answers (section 8.2 of deploy/REPLICATION.md), so the reply is the primary's; `health`,
    /// which every member answers, is that member's.
    /// - Parameters:
    ///   - query: The query.
    ///   - worker: The worker's ordinal: any the cluster knows the endpoints of
    ///     (``Cluster/worker(_:)``), below the routing count or not.
    /// - Throws: ``ReceiptsClientError`` `.timeout`, `.malformedReply`, `.cancelled`, `.closed`,
    ///   `.invalidArgument` for an ordinal the cluster cannot name.
    public func query(_ query: Query, worker: Int) async throws(ReceiptsClientError) -> QueryReply {
        try await self.query(query, worker: worker, deadline: nil)
    }

    /// Asks one worker a query, giving up at `deadline` at the latest.
    /// - Parameter deadline: nil for the configured query timeout from when the loop sends it.
    func query(
        _ query: Query,
        worker: Int,
        deadline: ContinuousClock.Instant?
    ) async throws(ReceiptsClientError) -> QueryReply {
        try await request { id, reply in
            .query(id: id, worker: worker, query: query, deadline: deadline, reply: reply)
        }
    }

    /// The worker that owns a conversation by the routing count (``Cluster/workerCount``);
    /// while the cluster's count changes, the conversation may be served elsewhere already,
    /// which NOT_OWNER answers lead to.
    public func owner(of conversation: String) -> Int {
        Partitioning.owner(of: conversation, workerCount: configuration.cluster.workerCount)
    }

    /// Shuts the client down: waiting calls fail with `.closed`, subscriptions end, sockets
    /// close. Events not yet acknowledged are not sent again (call ``flush()`` first).
    public func shutdown() async {
        inbox.post(.shutdown)
        await completion.wait()
    }

    /// Posts a command made with a fresh request id and waits for the loop's answer; a
    /// cancelled task tells the loop, which answers `.cancelled`.
    /// - Parameters:
    ///   - evenIfCancelled: Post the command even if the task is cancelled already.
    ///   - make: Builds the command, under the inbox's lock (see ``ClientInbox/post(_:)``).
    private func request<Value: Sendable>(
        evenIfCancelled: Bool = false,
        _ make: (UInt64, Reply<Value>) throws(ReceiptsClientError) -> ClientCommand
    ) async throws(ReceiptsClientError) -> Value {
        let ticket = RequestTicket(id: requestIDs.wrappingAdd(1, ordering: .relaxed).newValue, inbox: inbox)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: Reply<Value>) in
                ticket.post(evenIfCancelled: evenIfCancelled) { () throws(ReceiptsClientError) in
                    try make(ticket.id, continuation)
                } refuse: { failure in
                    continuation.resume(returning: .failure(failure))
                }
            }
        } onCancel: {
            ticket.cancel()
        }
        return try result.get()
    }
}
