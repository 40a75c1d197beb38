import Dispatch
import Glibc
import Logging
import Metrics
import ReceiptLog
import ReceiptsWire
import Synchronization

/// Encodes updates and sends them on the PUB socket from a thread of its own, so that
/// the pipeline's thread spends neither its time on encoding nor on libzmq's send path.
/// One queue, one thread: updates leave in the order they were handed over.
///
/// The queue holds at most `limit` updates: one that finds it full is dropped and counted
/// (`receiptd.updates.dropped`), so a thread that falls behind costs subscribers a repair,
/// never the worker its memory. The `StatusPublisher` numbered the update before handing it
/// over, so a drop leaves a gap in its conversation's (or user's) sequence, which the next
/// update there shows; subscribers then repair from a snapshot, as the Clone pattern expects
/// after the PUB socket's own drops at its high-water mark.
///
/// `@unchecked Sendable`: between `start()` and `stop()` the sink belongs to the thread alone
/// (libzmq lets a socket change threads across a full memory barrier, which the queue's lock,
/// the thread's start and its join give); the queue is behind its lock; the counters and the
/// log throttle are touched only by `publish`, on the pipeline's thread.
final class PublishingThread: UpdateSink, @unchecked Sendable {
    private struct Queue {
        var updates: [(topic: [UInt8], update: PublishedUpdate)] = []
        /// When the oldest queued update was handed over (monotonic nanoseconds).
        var oldestQueued: UInt64 = 0
        var stopping = false
    }

    /// What the drop warning is throttled by: there is one kind.
    private enum LoggedDrop: Hashable {
        case queueFull
    }

    private let sink: any UpdateSink
    private let limit: Int
    private let queue = Mutex(Queue())
    private let wakeup = DispatchSemaphore(value: 0)
    /// The queue's depth, recorded under its lock every 1,024 updates and when the thread takes
    /// it, and when an update finds it full, so that a thread that is stuck shows.
    private let depth = Gauge(label: MetricCatalog.publishQueueDepth.name)
    /// From the oldest update of each batch the thread takes to the batch sent.
    private let batchLatency = Metrics.Timer(
        label: MetricCatalog.ingestStages.name,
        dimensions: [("stage", IngestStage.publish.rawValue)]
    )
    private let counters: ServiceCounters
    private let dropped: ServiceCounters.Handle
    private let logger: Logger
    private var dropsLogged = LogThrottle<LoggedDrop>(intervalMilliseconds: 1000)
    /// Touched only by the owner's thread (`start`, `stop`).
    private var thread: JoinableThread

    /// - Parameters:
    ///   - sink: Where the thread sends updates: the bound PUB socket, which from `start()` to
    ///     `stop()` nothing else may use.
    ///   - limit: Updates the queue holds at most (`ServiceConfiguration.publishQueueLimit`).
    ///   - counters: The worker's counters, on the pipeline's thread; `receiptd.updates.dropped`
    ///     is registered here, so that it is exported (and alertable) at 0.
    ///   - logger: Where drops are warned about, at most once a second.
    ///   - threads: Starts the `receiptd-pub` thread.
    init(
        sink: any UpdateSink,
        limit: Int,
        counters: ServiceCounters,
        logger: Logger,
        threads: ThreadStarter
    ) {
        self.sink = sink
        self.limit = limit
        self.counters = counters
        self.dropped = counters.handle(.updatesDropped)
        self.logger = logger
        thread = JoinableThread(name: "receiptd-pub", threads: threads)
    }

    /// Starts the thread; the sink is its from now on.
    /// - Throws: `ServiceError` with code `system` if the thread cannot be started; the sink
    ///   then stays the caller's, and `stop()` has no thread to wait for.
    func start() throws(ServiceError) {
        try thread.start { [self] in run() }
    }

    /// Sends everything queued so far, then ends the thread; the sink is the caller's again.
    /// Returns at once if the thread is not running.
    func stop() {
        thread.stop {
            queue.withLock { $0.stopping = true }
            wakeup.signal()
        }
    }

    /// Whether the sink's subscribers follow any user topic (read on the pipeline's thread).
    var followsUserTopics: Bool { sink.followsUserTopics }

    /// The users whose topic gained a subscriber (taken on the pipeline's thread).
    func takeNewFollowers() -> [String] { sink.takeNewFollowers() }

    /// Updates queued and not yet taken by the thread (what the depth gauge shows).
    var queuedUpdates: Int {
        queue.withLock { $0.updates.count }
    }

    /// Queues one update (on the pipeline's thread) for the thread to encode and send; drops
    /// and counts it when `limit` updates are queued already.
    func publish(topic: [UInt8], update: PublishedUpdate) {
        let queued = queue.withLock { queue -> Int? in
            guard queue.updates.count < limit else { return nil }
            if queue.updates.isEmpty { queue.oldestQueued = ServiceClock.monotonicNanoseconds() }
            queue.updates.append((topic, update))
            // A gauge record per update would cost the hot path a metrics call; the depth that
            // matters (a thread falling behind) is reached in such steps.
            if queue.updates.count & 1023 == 0 { depth.record(queue.updates.count) }
            return queue.updates.count
        }
        guard let queued else {
            drop()
            return
        }
        // The thread swaps the whole queue out at each wake-up: one signal per batch.
        if queued == 1 { wakeup.signal() }
    }

    /// Counts an update the full queue turned away, and warns at most once a second.
    private func drop() {
        depth.record(limit)
        counters.increment(dropped)
        guard let unlogged = dropsLogged.admit(.queueFull) else { return }
        logger.warning(
            "publishing queue full: updates dropped; subscribers repair the sequence gap from a snapshot",
            metadata: ["publish.queue_limit": "\(limit)", "updates.dropped_unlogged": "\(unlogged)"]
        )
    }

    private func run() {
        var batch: [(topic: [UInt8], update: PublishedUpdate)] = []
        var stopping = false
        while !stopping {
            // Woken by the first update of a batch, and at least every 100 ms to take in the
            // subscriptions, which decide whether read states are published at all.
            _ = wakeup.wait(timeout: .now() + .milliseconds(100))
            sink.refreshSubscriptions()
            let oldestQueued: UInt64
            (stopping, oldestQueued) = queue.withLock { queue in
                swap(&batch, &queue.updates)
                depth.record(0)
                return (queue.stopping, queue.oldestQueued)
            }
            guard !batch.isEmpty else { continue }
            for (topic, update) in batch {
                sink.publish(topic: topic, update: update)
            }
            batch.removeAll(keepingCapacity: true)
            let waited = ServiceClock.nanoseconds(from: oldestQueued, to: ServiceClock.monotonicNanoseconds())
            batchLatency.recordNanoseconds(Int64(clamping: waited))
        }
    }
}
