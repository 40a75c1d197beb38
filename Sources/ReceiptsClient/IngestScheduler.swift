import DequeModule
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire

/// The client's ingest without its sockets: which events go in which frame to which worker,
/// when, and which sends are answered.
///
/// Per worker it keeps the queue of events not yet framed, the frames in flight and the events
/// waiting out a `moving` pause (``WorkerIngest``). It frames within the in-flight, linger,
/// batch-size and replay-window limits, re-sends frames whose acknowledgement is late, settles
/// each event's outcome, and asks ``RoutingPolicy`` what a NOT_OWNER, UNAVAILABLE or `moving`
/// answer does. For a replicated ordinal it sends to the member ``PrimaryTracker`` names, tells
/// the tracker of NOT_PRIMARY answers and of silent members, and whenever the tracker moves the
/// ordinal to another member, sends that member every frame in flight again, in the original
/// order, with the same tags and event ids, before anything newer (deploy/REPLICATION.md
/// section 8.2). It takes sends, acknowledgements and the time as arguments, and tells its
/// ``IngestEnvironment`` what to transmit and whom to answer: `ClientLoop` feeds it from the
/// sockets, `IngestSchedulerTests` feed it directly.
///
/// Single-threaded: every method runs on the thread that owns the environment.
final class IngestScheduler {
    typealias Instant = ContinuousClock.Instant

    private let configuration: ReceiptsClient.Configuration
    private let policy: RoutingPolicy
    /// The member each ordinal is served by, shared with the loop's queries.
    private let primaries: PrimaryTracker
    private let statistics: ClientStatistics
    private let logger: Logger
    /// The owner of this scheduler: it outlives it.
    private unowned let environment: any IngestEnvironment
    /// Per worker the scheduler has queued for, by ordinal.
    private var workers: [WorkerIngest] = []
    /// Sends not yet answered, by request id.
    private var sends: [UInt64: SendState] = [:]
    /// Sends waiting for room in the queues (backpressure) or for their outbox record to be
    /// durable, oldest first, and their events.
    private var admissions = Deque<UInt64>()
    private var pendingEvents: [UInt64: [Event]] = [:]
    /// Events queued but not yet in a frame, over all workers.
    private(set) var queuedEvents = 0
    private var nextTag: UInt64 = 1

    /// A scheduler with nothing queued.
    /// - Parameters:
    ///   - configuration: The batching, retry and routing settings, and the cluster.
    ///   - primaries: The member each ordinal is served by.
    ///   - statistics: Counts frames sent and re-sent, redirects and retries.
    ///   - logger: For re-sends (debug).
    ///   - environment: Where frames and answers go; it must outlive the scheduler.
    init(
        configuration: ReceiptsClient.Configuration,
        primaries: PrimaryTracker,
        statistics: ClientStatistics,
        logger: Logger,
        environment: any IngestEnvironment
    ) {
        self.configuration = configuration
        policy = RoutingPolicy(configuration)
        self.primaries = primaries
        self.statistics = statistics
        self.logger = logger
        self.environment = environment
    }

    /// Whether no send waits for its answer (a `flush` is answered then).
    var isIdle: Bool { sends.isEmpty }

    /// Takes a send: routes each event to its owner (user-wide events to every listed worker,
    /// ``Cluster/ordinals``: during a worker count change the workers beyond the routing count
    /// already own conversations, or still do) once the queues have room and its outbox record
    /// (if any) is durable, else holds it (the caller waits: backpressure).
    /// - Parameters:
    ///   - id: The request id the answer carries.
    ///   - events: The events, ids assigned.
    ///   - outboxPosition: Where the events' outbox record ends; nil for a send not in the outbox.
    ///   - now: The time (the linger clock of a queue starts at its first event).
    func startSend(id: UInt64, events: [Event], outboxPosition: LogPosition?, now: Instant) {
        guard !events.isEmpty else {
            environment.answer(id, .success([]), outboxIDs: [])
            return
        }
        sends[id] = SendState(events: events, outboxPosition: outboxPosition)
        pendingEvents[id] = events
        admissions.append(id)
        admitWaitingSends(now: now)
    }

    /// Moves held sends into the queues, oldest first, while they fit (a send larger than the
    /// whole bound goes in alone, so it cannot wait forever) and their outbox records are
    /// durable. Oldest first keeps each worker's queue in the order the client numbered its
    /// events (see ``ReceiptsClient``'s `takeIn`).
    func admitWaitingSends(now: Instant) {
        let listed = configuration.cluster.ordinals
        while let id = admissions.first {
            guard let events = pendingEvents[id], let send = sends[id] else {
                admissions.removeFirst()
                continue
            }
            if let position = send.outboxPosition {
                do {
                    // Later sends wait too, keeping the order; the outbox rings the doorbell
                    // when its durable position moves.
                    guard try environment.isDurable(position) else { return }
                } catch {
                    admissions.removeFirst()
                    pendingEvents[id] = nil
                    sends[id] = nil
                    environment.answer(id, .failure(error), outboxIDs: [])
                    continue
                }
            }
            let slotCount = events.reduce(0) { $0 + ($1.kind.conversation == nil ? listed.count : 1) }
            guard queuedEvents == 0 || queuedEvents + slotCount <= configuration.maxQueuedEvents else { return }
            admissions.removeFirst()
            pendingEvents[id] = nil
            send.remaining = slotCount
            for (index, event) in events.enumerated() {
                let slot = EventSlot(request: id, index: index, event: event)
                if let conversation = event.kind.conversation {
                    let owner = Partitioning.owner(of: conversation, workerCount: configuration.cluster.workerCount)
                    enqueue(slot, on: owner, now: now)
                } else {
                    for worker in listed { enqueue(slot, on: worker, now: now) }
                }
            }
        }
    }

    /// Stops answering a send: events not yet sent are withdrawn, sent ones are still
    /// acknowledged (their outcomes are then dropped). Events in the outbox are never withdrawn,
    /// and their send is still answered, for the outbox (the caller no longer waits).
    /// - Parameters:
    ///   - id: The send's request id.
    ///   - now: The time, for the sends this makes room for.
    /// - Returns: false if no such send is pending.
    func cancelSend(id: UInt64, now: Instant) -> Bool {
        guard let send = sends[id] else { return false }
        guard send.outboxIDs.isEmpty else {
            // Delivered anyway; the outbox is told once they are answered.
            return true
        }
        if pendingEvents.removeValue(forKey: id) != nil {
            admissions.removeAll { $0 == id }
            sends[id] = nil
            return true
        }
        var withdrawn = 0
        var withdrawnDelayed = 0
        for worker in workers.indices {
            let before = workers[worker].queue.count
            workers[worker].queue.removeAll { $0.request == id }
            withdrawn += before - workers[worker].queue.count
            // Rejected as `moving` and not applied anywhere: as good as unsent.
            let delayedBefore = workers[worker].delayed.count
            workers[worker].delayed.removeAll { $0.slot.request == id }
            withdrawnDelayed += delayedBefore - workers[worker].delayed.count
        }
        queuedEvents -= withdrawn
        send.isCancelled = true
        send.remaining -= withdrawn + withdrawnDelayed
        if send.remaining == 0 { sends[id] = nil }
        admitWaitingSends(now: now)
        return true
    }

    /// Frames and sends what the queues hold, per worker, within the in-flight, linger and
    /// replay-window limits, after the frames in flight of an ordinal whose member changed;
    /// then admits held sends the queues have room for now.
    func pump(now: Instant) {
        for worker in workers.indices {
            follow(worker, now: now)
            requeueFirst(workers[worker].takeDueDelayed(now: now), on: worker, now: now)
            while workers[worker].inFlight.count < configuration.maxFramesInFlight, !workers[worker].queue.isEmpty {
                if configuration.lingerMilliseconds > 0, workers[worker].queue.count < configuration.maxBatchEvents,
                    let since = workers[worker].queuedSince,
                    now < since + .milliseconds(configuration.lingerMilliseconds)
                {
                    break
                }
                guard sendFrame(worker: worker, now: now) else { break }
            }
        }
        admitWaitingSends(now: now)
    }

    /// Re-sends frames whose deadline passed. A lost acknowledgement usually means the worker
    /// restarted and lost everything after it on that connection, so every frame sent after
    /// it goes again too, in the original order, with the same tags and event ids. A member of
    /// a replicated ordinal that let an acknowledgement time out (a primary killed, frozen or
    /// cut off) is left for the next member, which gets every frame in flight.
    func expireDeadlines(now: Instant) {
        for worker in workers.indices {
            guard let first = workers[worker].inFlight.firstIndex(where: { $0.deadline <= now }) else { continue }
            if !workers[worker].inFlight[first].isPaused, primaries.leave(workers[worker].member, of: worker) {
                logger.debug(
                    "left a silent member",
                    metadata: ["receipts.worker": "\(worker)", "receipts.member": "\(workers[worker].member)"]
                )
                follow(worker, now: now)
            } else {
                resend(worker, from: first, now: now)
            }
        }
    }

    /// The earliest time something must happen without a reply: a frame's deadline, a
    /// `moving` pause's end, or the linger of a queue that can be framed.
    func nextDeadline() -> Instant? {
        var next: Instant?
        for worker in workers {
            if let due = worker.nextDeadline(lingerMilliseconds: configuration.lingerMilliseconds) {
                next = min(next ?? due, due)
            }
        }
        return next
    }

    /// Takes a worker's acknowledgement of a frame.
    /// - Parameters:
    ///   - reply: The decoded reply; nil if it could not be decoded.
    ///   - tag: The tag it came back with: a frame not in flight (a second answer to a re-sent
    ///     frame, or not ours) is ignored.
    ///   - worker: The worker whose ingest socket it came from.
    ///   - member: The member of the worker's ordinal that answered.
    ///   - now: The time, for the pauses it starts.
    func acknowledged(_ reply: IngestReply?, tag: UInt64, worker: Int, member: Int, now: Instant) {
        guard workers.indices.contains(worker),
            let index = workers[worker].inFlight.firstIndex(where: { $0.tag == tag })
        else { return }
        let frame = workers[worker].inFlight[index]
        guard let reply else {
            statistics.malformedReplies.add(1)
            workers[worker].inFlight.remove(at: index)
            fail(frame.slots, ReceiptsClientError(.malformedReply, "worker \(worker) sent an undecodable IngestReply"))
            return
        }
        if let error = reply.error, error.code == .notPrimary {
            // The member does not take writes: follow the primary it names with every frame
            // in flight, or (none named yet) ask it again after a pause.
            switch primaries.notPrimary(error.primary, ordinal: worker, member: member, now: now) {
            case .switchMember:
                follow(worker, now: now)
            case .retry(let pause):
                workers[worker].inFlight[index].deadline = now + .milliseconds(pause)
                workers[worker].inFlight[index].isPaused = true
            }
            return
        }
        if let error = reply.error {
            // A whole frame holds many conversations, so it follows no owner (nothing is
            // reachable for it); it may only wait and go again.
            if let refusal = RoutingPolicy.Refusal(error),
                case .retry(let pause) = policy.decide(refusal, from: worker, hops: 0, canReach: { _ in false })
            {
                workers[worker].inFlight[index].deadline = now + .milliseconds(pause)
                workers[worker].inFlight[index].isPaused = true
                statistics.unavailableReplies.add(1)
                return
            }
            workers[worker].inFlight.remove(at: index)
            fail(
                frame.slots,
                ReceiptsClientError(.rejected, "worker \(worker) refused the frame: \(error.code): \(error.message)")
            )
            return
        }
        workers[worker].inFlight.remove(at: index)
        guard reply.results.count == frame.slots.count else {
            statistics.malformedReplies.add(1)
            fail(
                frame.slots,
                ReceiptsClientError(
                    .malformedReply,
                    "worker \(worker) answered \(reply.results.count) outcomes for \(frame.slots.count) events"
                )
            )
            return
        }
        var redirected: [Int: [EventSlot]] = [:]
        for (slot, outcome) in zip(frame.slots, reply.results) {
            guard case .rejected(let rejection) = outcome, let refusal = RoutingPolicy.Refusal(rejection) else {
                settle(slot, outcome)
                continue
            }
            switch policy.decide(refusal, from: worker, hops: slot.redirects, canReach: environment.reach) {
            case .follow(let owner):
                // The cluster's worker count differs from ours (or the conversation moved).
                var next = slot
                next.redirects += 1
                redirected[owner, default: []].append(next)
                statistics.redirects.add(1)
            case .retry(let pause):
                // Being copied to another worker: the same event goes to the same worker
                // again, until that worker applies it or names the new owner. The send's own
                // cancellation is what ends this, never the pause: one cancelled while this
                // frame was out is withdrawn now, as `cancelSend` withdrew its paused events.
                if let send = sends[slot.request], send.isCancelled {
                    send.remaining -= 1
                    finishIfDone(slot.request, send)
                    continue
                }
                workers[worker].delayed.append((due: now + .milliseconds(pause), slot: slot))
                statistics.movingRetries.add(1)
            case .giveUp:
                settle(slot, outcome)
            }
        }
        for (owner, slots) in redirected {
            requeueFirst(slots, on: owner, now: now)
        }
    }

    // MARK: - Queues

    /// Sends every frame in flight again to the member ``PrimaryTracker`` names for the
    /// ordinal, if it is not the one they went to.
    private func follow(_ worker: Int, now: Instant) {
        let current = primaries.current(of: worker)
        guard workers[worker].member != current else { return }
        workers[worker].member = current
        resend(worker, from: 0, now: now)
    }

    /// Sends the frames in flight from `first` on again to the worker's member, in order, each
    /// with a new acknowledgement deadline.
    private func resend(_ worker: Int, from first: Int, now: Instant) {
        guard first < workers[worker].inFlight.count else { return }
        for index in first..<workers[worker].inFlight.count {
            workers[worker].inFlight[index].attempts += 1
            workers[worker].inFlight[index].isPaused = false
            workers[worker].inFlight[index].deadline =
                now + .milliseconds(configuration.acknowledgementTimeoutMilliseconds)
            let frame = workers[worker].inFlight[index]
            _ = environment.transmit(tag: frame.tag, body: frame.body, to: worker, member: workers[worker].member)
            statistics.framesResent.add(1)
        }
        logger.debug(
            "re-sent unacknowledged frames",
            metadata: [
                "receipts.worker": "\(worker)", "receipts.member": "\(workers[worker].member)",
                "receipts.frames": "\(workers[worker].inFlight.count - first)",
            ]
        )
    }

    /// The state of a worker, made on first use.
    private func ensureWorker(_ worker: Int) {
        while workers.count <= worker { workers.append(WorkerIngest()) }
    }

    private func enqueue(_ slot: EventSlot, on worker: Int, now: Instant) {
        ensureWorker(worker)
        workers[worker].enqueue(slot, now: now)
        queuedEvents += 1
    }

    /// Puts events back at the front of a worker's queue (a redirect, a pause over).
    private func requeueFirst(_ slots: [EventSlot], on worker: Int, now: Instant) {
        guard !slots.isEmpty else { return }
        ensureWorker(worker)
        workers[worker].requeueFirst(slots, now: now)
        queuedEvents += slots.count
    }

    /// Sends one frame from the head of a worker's queue.
    /// - Returns: false if nothing could leave (window limit, or the socket refused).
    private func sendFrame(worker: Int, now: Instant) -> Bool {
        let floors = workers[worker].sequenceFloors()
        var slots: [EventSlot] = []
        var frameFloors: [String: UInt64] = [:]
        while slots.count < configuration.maxBatchEvents, let slot = workers[worker].queue.first {
            let id = slot.event.id
            if let floor = floors[id.source], id.sequence >= floor &+ configuration.replayWindow / 2 { break }
            slots.append(slot)
            frameFloors[id.source] = min(frameFloors[id.source] ?? .max, id.sequence)
            workers[worker].queue.removeFirst()
        }
        guard !slots.isEmpty else { return false }
        let frame = InFlightFrame(
            tag: nextTag,
            slots: slots,
            body: EventBatchCodec.encode(slots.map(\.event)),
            floors: frameFloors,
            deadline: now + .milliseconds(configuration.acknowledgementTimeoutMilliseconds)
        )
        guard environment.transmit(tag: frame.tag, body: frame.body, to: worker, member: workers[worker].member) else {
            workers[worker].queue.insert(contentsOf: slots, at: 0)
            return false
        }
        nextTag += 1
        queuedEvents -= slots.count
        workers[worker].queuedSince = workers[worker].queue.isEmpty ? nil : now
        workers[worker].inFlight.append(frame)
        statistics.framesSent.add(1)
        return true
    }

    // MARK: - Answers

    /// Records one event's answer and answers its send when it was the last.
    private func settle(_ slot: EventSlot, _ outcome: EventOutcome) {
        guard let send = sends[slot.request] else { return }
        send.outcomes[slot.index] = SendState.merge(send.outcomes[slot.index], outcome)
        send.remaining -= 1
        finishIfDone(slot.request, send)
    }

    private func fail(_ slots: [EventSlot], _ error: ReceiptsClientError) {
        for slot in slots {
            guard let send = sends[slot.request] else { continue }
            send.failure = send.failure ?? error
            send.remaining -= 1
            finishIfDone(slot.request, send)
        }
    }

    private func finishIfDone(_ id: UInt64, _ send: SendState) {
        guard send.remaining == 0 else { return }
        sends[id] = nil
        guard !send.isCancelled else { return }
        let result: Result<[EventOutcome], ReceiptsClientError> =
            if let failure = send.failure {
                .failure(failure)
            } else {
                .success(send.outcomes.map { $0 ?? .duplicate })
            }
        environment.answer(id, result, outboxIDs: send.outboxIDs)
    }
}
