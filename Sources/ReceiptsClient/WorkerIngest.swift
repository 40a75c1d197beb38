import DequeModule
import ReceiptsCore
import ZeroMQ

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
    /// When to re-send it: the acknowledgement timeout, or the back-off after UNAVAILABLE.
    var deadline: ContinuousClock.Instant
    var attempts = 1
}

/// One worker's ingest: the queue of events not yet framed and the frames in flight, in the
/// order they were sent.
struct WorkerIngest {
    /// The DEALER to the worker's ingest endpoint, connected at the first frame.
    let connection: LazyConnection
    var queue = Deque<EventSlot>()
    /// When the oldest queued event arrived (the linger clock).
    var queuedSince: ContinuousClock.Instant?
    var inFlight: [InFlightFrame] = []

    init(connection: LazyConnection) {
        self.connection = connection
    }

    /// The earliest time something must happen without a reply: a frame's deadline, or the
    /// linger of a queue that can be framed.
    func nextDeadline(lingerMilliseconds: Int) -> ContinuousClock.Instant? {
        var next = inFlight.lazy.map(\.deadline).min()
        if let queuedSince, !queue.isEmpty {
            let due = queuedSince + .milliseconds(lingerMilliseconds)
            next = min(next ?? due, due)
        }
        return next
    }

    /// Per source, the lowest sequence in flight: no event may leave that is `replayWindow`
    /// or more above it, or a re-send of the lower one could come after the worker's anti-replay
    /// window has moved past it and be taken for a duplicate.
    func sequenceFloors() -> [String: UInt64] {
        var floors: [String: UInt64] = [:]
        for frame in inFlight {
            floors.merge(frame.floors, uniquingKeysWith: min)
        }
        return floors
    }
}
