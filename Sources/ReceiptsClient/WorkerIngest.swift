import DequeModule
import ReceiptsCore

/// One event on its way to a worker: which send it answers, and where in that send.
struct EventSlot {
    /// The send's request id.
    var request: UInt64
    /// The event's index in the send.
    var index: Int
    var event: Event
    /// How often a NOT_OWNER answer has sent it on to another worker.
    var redirects = 0
}

/// A frame sent to a worker and not yet acknowledged.
struct InFlightFrame {
    let tag: UInt64
    let slots: [EventSlot]
    let body: [UInt8]
    /// Per source, the lowest sequence in the frame (see ``WorkerIngest/sequenceFloors()``).
    let floors: [String: UInt64]
    /// When to re-send it: the acknowledgement timeout, or the back-off after UNAVAILABLE or
    /// after NOT_PRIMARY naming no primary.
    var deadline: ContinuousClock.Instant
    /// Whether ``deadline`` is such a back-off: the member answered, so it is not left as silent
    /// when the deadline passes.
    var isPaused = false
    var attempts = 1
}

/// One worker's ingest in an ``IngestScheduler``: the queue of events not yet framed, the
/// frames in flight, in the order they were sent, the member of the ordinal they went to, and
/// the events waiting to be sent again after a `moving` rejection.
struct WorkerIngest {
    /// The member of the ordinal the frames in flight went to (always 0 for an unreplicated
    /// worker): when ``PrimaryTracker`` names another, they go there again.
    var member = 0
    var queue = Deque<EventSlot>()
    /// When the oldest queued event arrived (the linger clock).
    var queuedSince: ContinuousClock.Instant?
    var inFlight: [InFlightFrame] = []
    /// Events the worker rejected as `moving`, each with the time it goes to the head of
    /// ``queue`` again; in the order they were rejected.
    var delayed: [(due: ContinuousClock.Instant, slot: EventSlot)] = []

    /// Appends an event to the queue, starting the linger clock if it was empty.
    mutating func enqueue(_ slot: EventSlot, now: ContinuousClock.Instant) {
        if queue.isEmpty { queuedSince = now }
        queue.append(slot)
    }

    /// The earliest time something must happen without a reply: a frame's deadline, a delayed
    /// event's pause, or the linger of a queue that can be framed.
    func nextDeadline(lingerMilliseconds: Int) -> ContinuousClock.Instant? {
        var next = inFlight.lazy.map(\.deadline).min()
        if let due = delayed.lazy.map(\.due).min() {
            next = min(next ?? due, due)
        }
        if let queuedSince, !queue.isEmpty {
            let due = queuedSince + .milliseconds(lingerMilliseconds)
            next = min(next ?? due, due)
        }
        return next
    }

    /// Per source, the lowest sequence in flight or waiting to be sent again: no event may
    /// leave that is `replayWindow` or more above it, or a re-send of the lower one could come
    /// after the worker's anti-replay window has moved past it and be refused as outside it.
    func sequenceFloors() -> [String: UInt64] {
        var floors: [String: UInt64] = [:]
        for frame in inFlight {
            floors.merge(frame.floors, uniquingKeysWith: min)
        }
        for (_, slot) in delayed {
            let id = slot.event.id
            floors[id.source] = min(floors[id.source] ?? .max, id.sequence)
        }
        return floors
    }

    /// Puts events back at the head of the queue, in their order, ahead of anything queued:
    /// they were numbered before it (an event a worker redirected or asked to be sent again),
    /// and the head is what the replay-window check holds newer events back for.
    mutating func requeueFirst(_ slots: [EventSlot], now: ContinuousClock.Instant) {
        guard !slots.isEmpty else { return }
        if queue.isEmpty { queuedSince = now }
        queue.insert(contentsOf: slots, at: 0)
    }

    /// Takes the delayed events whose pause is over.
    mutating func takeDueDelayed(now: ContinuousClock.Instant) -> [EventSlot] {
        var due: [EventSlot] = []
        delayed.removeAll { entry in
            guard entry.due <= now else { return false }
            due.append(entry.slot)
            return true
        }
        return due
    }
}
