import CZeroMQ
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A libzmq context: the I/O threads and the namespace for `inproc://` endpoints.
///
/// libzmq contexts are thread-safe, so this type is `Sendable`; sockets made from it are not.
/// Every ``ZMQSocket`` keeps its context alive, so the context is only destroyed after its
/// last socket is gone.
public final class ZMQContext: Sendable {
    /// Where the context is in its life: new sockets are only made while `open`.
    private enum State {
        case open
        case shutDown
        case terminating
        case terminated
    }

    /// The `void *` from `zmq_ctx_new`, wrapped so the `Sendable` check can see it is shared on purpose.
    private struct Handle: @unchecked Sendable {
        let raw: UnsafeMutableRawPointer
    }

    private let handle: Handle
    private let state: Mutex<State>

    /// Creates a context.
    ///
    /// - Parameter ioThreads: The number of libzmq I/O threads (one is plenty below ~1 GB/s).
    /// - Throws: ``ZMQError`` if libzmq cannot create the context or rejects the thread count.
    public init(ioThreads: Int = 1) throws(ZMQError) {
        guard let raw = zmq_ctx_new() else { throw ZMQError.last("zmq_ctx_new") }
        guard let threads = Int32(exactly: ioThreads) else {
            zmq_ctx_term(raw)
            throw ZMQError(errno: EINVAL, operation: "zmq_ctx_set ZMQ_IO_THREADS")
        }
        guard zmq_ctx_set(raw, ZMQ_IO_THREADS, threads) == 0 else {
            let error = ZMQError.last("zmq_ctx_set ZMQ_IO_THREADS")
            zmq_ctx_term(raw)
            throw error
        }
        self.handle = Handle(raw: raw)
        self.state = Mutex(.open)
    }

    deinit {
        // Every socket holds this context, so none is left open here and zmq_ctx_term cannot block.
        let needsTerm = state.withLock { $0 != .terminated }
        if needsTerm { terminateRetryingInterrupts() }
    }

    /// Makes every blocking call on this context's sockets fail with ``ZMQError/Code-swift.struct/terminated``.
    ///
    /// Safe from any thread and does not wait: use it to stop a loop that owns sockets on
    /// another thread, which then closes them so ``terminate()`` can finish. Idempotent.
    public func shutdown() {
        state.withLock { state in
            guard state == .open else { return }
            zmq_ctx_shutdown(handle.raw)
            state = .shutDown
        }
    }

    /// Shuts the context down and waits until every socket made from it is closed.
    ///
    /// Blocks while any socket is still open (this is `zmq_ctx_term`): close sockets first, or
    /// call it from a thread other than the one that owns them. Unsent messages are kept for
    /// each socket's linger period (``ZMQSocket`` defaults linger to 0 so this never hangs on
    /// an unreachable peer). Idempotent; a concurrent second call returns without waiting.
    public func terminate() {
        let mustTerminate = state.withLock { state in
            switch state {
            case .terminating, .terminated:
                return false
            case .open:
                zmq_ctx_shutdown(handle.raw)
                state = .terminating
                return true
            case .shutDown:
                state = .terminating
                return true
            }
        }
        guard mustTerminate else { return }
        terminateRetryingInterrupts()
        state.withLock { $0 = .terminated }
    }

    /// Whether ``shutdown()`` or ``terminate()`` has been called.
    public var isShutDown: Bool {
        state.withLock { $0 != .open }
    }

    /// Calls `zmq_ctx_term`, which libzmq documents as restartable after EINTR.
    private func terminateRetryingInterrupts() {
        while zmq_ctx_term(handle.raw) != 0 && zmq_errno() == EINTR {}
    }

    /// Creates a libzmq socket while the context is known to be open.
    ///
    /// Holding the lock across `zmq_socket` keeps `terminate()` from freeing the context
    /// underneath it; after `shutdown()` no new socket is made.
    func makeSocket(_ type: Int32) throws(ZMQError) -> UnsafeMutableRawPointer {
        let result: Result<Handle, ZMQError> = state.withLock { state in
            guard state == .open else {
                return .failure(ZMQError(errno: ETERM, operation: "zmq_socket"))
            }
            guard let raw = zmq_socket(handle.raw, type) else {
                return .failure(ZMQError.last("zmq_socket"))
            }
            return .success(Handle(raw: raw))
        }
        return try result.get().raw
    }
}
