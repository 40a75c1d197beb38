import Synchronization

/// The bounded hand-over between the thread that reads and prepares records and the thread
/// that applies them, for ``ReceiptLog/replay(depth:preparing:applying:)``.
///
/// Items keep their order; `push` waits while `depth` items are queued, `pop` waits while
/// none are. Either side can stop the other: the producer by finishing (with its error, if
/// any), the consumer by cancelling.
final class ReplayQueue<Item: Sendable>: Sendable {
    private struct State {
        var items: [Item] = []
        var finished = false
        var failure: (any Error)?
        var cancelled = false
    }

    private let state = Mutex(State())
    private let itemsReady = Semaphore()
    private let slotsFree = Semaphore()

    init(depth: Int) {
        for _ in 0..<max(depth, 1) { self.slotsFree.signal() }
    }

    /// Queues an item; false (and the item dropped) once the consumer has cancelled.
    func push(_ item: Item) -> Bool {
        self.slotsFree.wait()
        let accepted = self.state.withLock { state in
            guard !state.cancelled else { return false }
            state.items.append(item)
            return true
        }
        if accepted { self.itemsReady.signal() }
        return accepted
    }

    /// Says that no item follows, and why when it is an error.
    func finish(_ failure: (any Error)?) {
        self.state.withLock { state in
            state.finished = true
            state.failure = failure
        }
        self.itemsReady.signal()
    }

    /// The next item, or nil after the last one.
    ///
    /// - Throws: The error the producer finished with, after every item before it.
    func pop() throws -> Item? {
        self.itemsReady.wait()
        let (item, failure) = self.state.withLock { state -> (Item?, (any Error)?) in
            if !state.items.isEmpty { return (state.items.removeFirst(), nil) }
            return (nil, state.failure)
        }
        if item != nil { self.slotsFree.signal() }
        if let failure { throw failure }
        return item
    }

    /// Stops the producer at its next `push`.
    func cancel() {
        self.state.withLock { $0.cancelled = true }
        self.slotsFree.signal()
    }
}
