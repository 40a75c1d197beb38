import Dispatch
import Glibc
import ReceiptsWire
import Synchronization

@testable import ReceiptsService

/// An update sink whose first `publish` blocks until `release()`: the publishing thread
/// stuck in a send. Keeps the status updates it was given, in order.
final class StalledSink: UpdateSink, Sendable {
    private struct State {
        var released = false
        var updates: [StatusUpdate] = []
    }

    private let state = Mutex(State())
    private let stalled = DispatchSemaphore(value: 0)
    private let gate = DispatchSemaphore(value: 0)

    func publish(topic: [UInt8], update: PublishedUpdate) {
        if !state.withLock({ $0.released }) {
            stalled.signal()
            gate.wait()
        }
        guard case .status(let status) = update else { return }
        state.withLock { $0.updates.append(status) }
    }

    /// Waits until a `publish` is blocked; false after `seconds`.
    func waitUntilStalled(seconds: Int) -> Bool {
        stalled.wait(timeout: .now() + .seconds(seconds)) == .success
    }

    /// Lets the blocked `publish` and every later one through.
    func release() {
        state.withLock { $0.released = true }
        gate.signal()
    }

    /// Waits until `count` status updates were sent; false after `seconds`.
    func waitForUpdates(_ count: Int, seconds: Int) -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while updates.count < count {
            guard ContinuousClock.now < deadline else { return false }
            usleep(1_000)
        }
        return true
    }

    /// The status updates sent so far.
    var updates: [StatusUpdate] {
        state.withLock { $0.updates }
    }
}
