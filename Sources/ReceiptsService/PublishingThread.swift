import Foundation
import ReceiptLog
import ReceiptsWire
import Synchronization
import ZeroMQ

/// Encodes updates and sends them on the PUB socket from a thread of its own, so that
/// the pipeline's thread spends neither its time on encoding nor on libzmq's send path.
/// One queue, one thread: updates leave in the order they were handed over.
///
/// `@unchecked Sendable`: between `start()` and `stop()` the socket belongs to the thread
/// alone (libzmq lets a socket change threads across a full memory barrier, which the queue's
/// lock and the semaphores give); the queue is behind its lock.
final class PublishingThread: UpdateSink, @unchecked Sendable {
    private struct Queue {
        var updates: [(topic: [UInt8], update: PublishedUpdate)] = []
        var stopping = false
    }

    private let socket: ZMQSocket
    private let queue = Mutex(Queue())
    private let wakeup = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Touched only by the owner's thread (`start`, `stop`).
    private var isRunning = false

    /// - Parameter socket: The bound PUB socket; from `start()` to `stop()` nothing else may use it.
    init(socket: ZMQSocket) {
        self.socket = socket
    }

    /// Starts the thread; the socket is its from now on.
    func start() {
        guard !isRunning else { return }
        isRunning = true
        let thread = Thread { [self] in
            nameCurrentThread("receiptd-pub")
            run()
        }
        thread.start()
    }

    /// Sends everything handed over so far, then ends the thread; the socket is the caller's again.
    func stop() {
        guard isRunning else { return }
        isRunning = false
        queue.withLock { $0.stopping = true }
        wakeup.signal()
        finished.wait()
    }

    /// Queues one update (on the pipeline's thread); the thread encodes and sends it.
    func publish(topic: [UInt8], update: PublishedUpdate) {
        let wasEmpty = queue.withLock { queue in
            queue.updates.append((topic, update))
            return queue.updates.count == 1
        }
        // The thread swaps the whole queue out at each wake-up: one signal per batch.
        if wasEmpty { wakeup.signal() }
    }

    private func run() {
        var batch: [(topic: [UInt8], update: PublishedUpdate)] = []
        var stopping = false
        while !stopping {
            wakeup.wait()
            stopping = queue.withLock { queue in
                swap(&batch, &queue.updates)
                return queue.stopping
            }
            for (topic, update) in batch {
                socket.publish(topic: topic, update: update)
            }
            batch.removeAll(keepingCapacity: true)
        }
        finished.signal()
    }
}
