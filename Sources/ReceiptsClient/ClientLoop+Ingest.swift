import DequeModule
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import ZeroMQ

extension ClientLoop {
    /// Takes a send: routes each event to its owner (user-wide events to every listed worker,
    /// ``Cluster/ordinals``: during a worker count change the workers beyond the routing count
    /// already own conversations, or still do) once
    /// the queues have room and its outbox record (if any) is durable, else holds it (the caller
    /// waits: backpressure).
    func startSend(id: UInt64, events: [Event], outboxPosition: LogPosition?, reply: Reply<[EventOutcome]>?) {
        guard !events.isEmpty else {
            reply?.resume(returning: .success([]))
            return
        }
        sends[id] = SendState(reply: reply, events: events, outboxPosition: outboxPosition)
        pendingEvents[id] = events
        admissions.append(id)
        admitWaitingSends()
    }

    /// Moves held sends into the queues, oldest first, while they fit (a send larger than the
    /// whole bound goes in alone, so it cannot wait forever) and their outbox records are
    /// durable. Oldest first keeps each worker's queue in the order the client numbered its
    /// events (see ``ReceiptsClient``'s `takeIn`).
    func admitWaitingSends() {
        let listed = configuration.cluster.ordinals
        while let id = admissions.first {
            guard let events = pendingEvents[id] else {
                admissions.removeFirst()
                continue
            }
            if let position = sends[id]?.outboxPosition, let outbox {
                do {
                    // Later sends wait too, keeping the order; the outbox rings the doorbell
                    // when its durable position moves.
                    guard try outbox.durability.isDurable(position) else { return }
                } catch {
                    admissions.removeFirst()
                    pendingEvents[id] = nil
                    sends.removeValue(forKey: id)?.reply?.resume(returning: .failure(error))
                    continue
                }
            }
            let slotCount = events.reduce(0) { $0 + ($1.kind.conversation == nil ? listed.count : 1) }
            guard queuedEvents == 0 || queuedEvents + slotCount <= configuration.maxQueuedEvents else { return }
            admissions.removeFirst()
            pendingEvents[id] = nil
            sends[id]?.remaining = slotCount
            let now = clock.now
            for (index, event) in events.enumerated() {
                let slot = EventSlot(request: id, index: index, event: event)
                if let conversation = event.kind.conversation {
                    enqueue(slot, on: owner(of: conversation), now: now)
                } else {
                    for worker in listed { enqueue(slot, on: worker, now: now) }
                }
            }
        }
    }

    private func enqueue(_ slot: EventSlot, on worker: Int, now: Instant) {
        if ingest[worker].queue.isEmpty { ingest[worker].queuedSince = now }
        ingest[worker].queue.append(slot)
        queuedEvents += 1
    }

    /// Puts events back at the front of a worker's queue (a redirect, a pause over).
    private func requeueFirst(_ slots: [EventSlot], on worker: Int, now: Instant) {
        ingest[worker].requeueFirst(slots, now: now)
        queuedEvents += slots.count
    }

    /// Stops a caller waiting: unsent events are withdrawn, sent ones are still acknowledged
    /// (their outcomes are then dropped). Events in the outbox are never withdrawn.
    /// - Returns: false if no such send is pending.
    func cancelSend(id: UInt64) -> Bool {
        guard let send = sends[id] else { return false }
        send.reply?.resume(returning: .failure(ReceiptsClientError(.cancelled, "the send was cancelled")))
        guard send.outboxIDs.isEmpty else {
            sends[id]?.reply = nil
            return true
        }
        if pendingEvents.removeValue(forKey: id) != nil {
            admissions.removeAll { $0 == id }
            sends[id] = nil
            return true
        }
        var withdrawn = 0
        var withdrawnDelayed = 0
        for worker in ingest.indices {
            let before = ingest[worker].queue.count
            ingest[worker].queue.removeAll { $0.request == id }
            withdrawn += before - ingest[worker].queue.count
            // Rejected as `moving` and not applied anywhere: as good as unsent.
            let delayedBefore = ingest[worker].delayed.count
            ingest[worker].delayed.removeAll { $0.slot.request == id }
            withdrawnDelayed += delayedBefore - ingest[worker].delayed.count
        }
        queuedEvents -= withdrawn
        sends[id]?.reply = nil
        sends[id]?.remaining -= withdrawn + withdrawnDelayed
        if sends[id]?.remaining == 0 { sends[id] = nil }
        admitWaitingSends()
        return true
    }

    /// Frames and sends what the queues hold, per worker, within the in-flight, linger and
    /// replay-window limits.
    func pumpIngest(now: Instant) {
        for worker in ingest.indices {
            requeueFirst(ingest[worker].takeDueDelayed(now: now), on: worker, now: now)
            while ingest[worker].inFlight.count < configuration.maxFramesInFlight, !ingest[worker].queue.isEmpty {
                if configuration.lingerMilliseconds > 0, ingest[worker].queue.count < configuration.maxBatchEvents,
                    let since = ingest[worker].queuedSince,
                    now < since + .milliseconds(configuration.lingerMilliseconds)
                {
                    break
                }
                guard sendFrame(worker: worker, now: now) else { break }
            }
        }
        admitWaitingSends()
    }

    /// Sends one frame from the head of a worker's queue.
    /// - Returns: false if nothing could leave (window limit, or libzmq refused).
    private func sendFrame(worker: Int, now: Instant) -> Bool {
        let floors = ingest[worker].sequenceFloors()
        var slots: [EventSlot] = []
        var frameFloors: [String: UInt64] = [:]
        while slots.count < configuration.maxBatchEvents, let slot = ingest[worker].queue.first {
            let id = slot.event.id
            if let floor = floors[id.source], id.sequence >= floor &+ configuration.replayWindow / 2 { break }
            slots.append(slot)
            frameFloors[id.source] = min(frameFloors[id.source] ?? .max, id.sequence)
            ingest[worker].queue.removeFirst()
        }
        guard !slots.isEmpty else { return false }
        let frame = InFlightFrame(
            tag: makeTag(),
            slots: slots,
            body: EventBatchCodec.encode(slots.map(\.event)),
            floors: frameFloors,
            deadline: now + .milliseconds(configuration.acknowledgementTimeoutMilliseconds)
        )
        guard transmit(frame, worker: worker) else {
            ingest[worker].queue.insert(contentsOf: slots, at: 0)
            return false
        }
        queuedEvents -= slots.count
        ingest[worker].queuedSince = ingest[worker].queue.isEmpty ? nil : now
        ingest[worker].inFlight.append(frame)
        statistics.framesSent.add(1)
        return true
    }

    /// Puts a frame on the wire without waiting.
    /// - Returns: false if libzmq could not queue it now.
    private func transmit(_ frame: InFlightFrame, worker: Int) -> Bool {
        do {
            return try ingest[worker].connection.connected()
                .send([Self.tagFrame(frame.tag), [], frame.body], dontWait: true)
        } catch {
            logger.warning("ingest send failed", metadata: ["receipts.worker": "\(worker)", "error": "\(error)"])
            return false
        }
    }

    /// Re-sends frames whose deadline passed. A lost acknowledgement usually means the worker
    /// restarted and lost everything after it on that connection, so every frame sent after
    /// it goes again too, in the original order, with the same tags and event ids.
    func expireIngestDeadlines(now: Instant) {
        for worker in ingest.indices {
            guard let first = ingest[worker].inFlight.firstIndex(where: { $0.deadline <= now }) else { continue }
            for index in first..<ingest[worker].inFlight.count {
                ingest[worker].inFlight[index].attempts += 1
                ingest[worker].inFlight[index].deadline =
                    now + .milliseconds(configuration.acknowledgementTimeoutMilliseconds)
                _ = transmit(ingest[worker].inFlight[index], worker: worker)
                statistics.framesResent.add(1)
            }
            logger.debug(
                "re-sent unacknowledged frames",
                metadata: [
                    "receipts.worker": "\(worker)", "receipts.frames": "\(ingest[worker].inFlight.count - first)",
                ]
            )
        }
    }

    /// Reads every acknowledgement waiting on a worker's ingest socket.
    func receiveIngestReplies(worker: Int) throws(ZMQError) {
        while true {
            let received = try ingest[worker].connection.socket.receiveMultipart(dontWait: true) {
                frames -> (UInt64, IngestReply?)? in
                guard let tag = Self.tag(of: frames) else { return nil }
                return (tag, try? IngestReply.decode(frames[2]))
            }
            guard let received else { return }
            guard let (tag, reply) = received,
                let index = ingest[worker].inFlight.firstIndex(where: { $0.tag == tag })
            else {
                continue  // a second answer to a re-sent frame, or not ours
            }
            handleAcknowledgement(reply, frameAt: index, worker: worker)
        }
    }

    private func handleAcknowledgement(_ reply: IngestReply?, frameAt index: Int, worker: Int) {
        let frame = ingest[worker].inFlight[index]
        guard let reply else {
            statistics.malformedReplies.add(1)
            ingest[worker].inFlight.remove(at: index)
            fail(frame.slots, ReceiptsClientError(.malformedReply, "worker \(worker) sent an undecodable IngestReply"))
            return
        }
        if let error = reply.error {
            if error.code == .unavailable {
                // The worker is stopping, its log failed, or this connection has as many frames
                // waiting as it takes: the frame goes again after a pause.
                ingest[worker].inFlight[index].deadline =
                    clock.now + .milliseconds(configuration.unavailableBackoffMilliseconds)
                statistics.unavailableReplies.add(1)
                return
            }
            ingest[worker].inFlight.remove(at: index)
            fail(
                frame.slots,
                ReceiptsClientError(.rejected, "worker \(worker) refused the frame: \(error.code): \(error.message)")
            )
            return
        }
        ingest[worker].inFlight.remove(at: index)
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
        let now = clock.now
        var redirected: [Int: [EventSlot]] = [:]
        for (slot, outcome) in zip(frame.slots, reply.results) {
            guard case .rejected(let rejection) = outcome else {
                settle(slot, outcome)
                continue
            }
            switch rejection.reason {
            case .moving:
                // Its conversation is being copied to another worker: the same event goes to
                // the same worker again after a pause, until that worker applies it or names
                // the new owner. The send's own cancellation is what ends this, never `moving`.
                ingest[worker].delayed.append(
                    (due: now + .milliseconds(configuration.movingBackoffMilliseconds), slot: slot)
                )
                statistics.movingRetries.add(1)
            case .notOwner:
                // The cluster's worker count differs from ours (or the conversation moved):
                // follow the owner it names, even above our routing count if its endpoints are known.
                guard let owner = rejection.ownerWorker, owner != worker,
                    slot.redirects < configuration.maxRedirects, reach(owner)
                else {
                    settle(slot, outcome)
                    continue
                }
                var next = slot
                next.redirects += 1
                redirected[owner, default: []].append(next)
                statistics.redirects.add(1)
            default:
                settle(slot, outcome)
            }
        }
        for (owner, slots) in redirected {
            requeueFirst(slots, on: owner, now: now)
        }
    }

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
        if !send.outboxIDs.isEmpty {
            if let failure = send.failure {
                logger.error("events in the outbox were refused", metadata: ["error": "\(failure)"])
            }
            outbox?.answered(send.outboxIDs)
        }
        if let failure = send.failure {
            send.reply?.resume(returning: .failure(failure))
        } else {
            send.reply?.resume(returning: .success(send.outcomes.map { $0 ?? .duplicate }))
        }
    }
}
