import CZeroMQ

/// A libzmq socket owned by one thread.
///
/// libzmq sockets are not thread-safe, so this class is deliberately not `Sendable`: create it
/// on the thread (or in the loop) that uses it and keep it there. It holds its ``ZMQContext``
/// strongly, so the context cannot be terminated underneath it, and closes itself on `deinit`.
/// After ``close()`` every operation throws ``ZMQError/Code-swift.struct/notSocket`` instead of
/// touching freed memory.
public final class ZMQSocket {
    /// The context this socket was made from; kept alive for as long as the socket exists.
    public let context: ZMQContext

    /// The socket's pattern.
    public let type: SocketType

    /// The libzmq socket, or `nil` once closed.
    private(set) var handle: UnsafeMutableRawPointer?

    /// Reusable `zmq_msg_t` storage for receives, so the hot path does not allocate per frame.
    var messagePool: [UnsafeMutablePointer<zmq_msg_t>] = []

    /// Creates a socket.
    ///
    /// - Parameters:
    ///   - context: The context to create the socket in; kept alive by the socket.
    ///   - type: The socket pattern.
    ///   - lingerMilliseconds: How long `close` keeps unsent messages. Defaults to 0, not
    ///     libzmq's infinite default, because an infinite linger makes `zmq_ctx_term` hang on
    ///     any unreachable peer; delivery is only ever proven by an application-level reply.
    /// - Throws: ``ZMQError`` with ``ZMQError/Code-swift.struct/terminated`` if the context is
    ///   shut down, or whatever `zmq_socket` reports (e.g. too many sockets).
    public init(context: ZMQContext, type: SocketType, lingerMilliseconds: Int32 = 0) throws(ZMQError) {
        self.context = context
        self.type = type
        self.handle = try context.makeSocket(type.rawValue)
        try setLinger(milliseconds: lingerMilliseconds)
    }

    deinit {
        close()
        for message in messagePool {
            message.deallocate()
        }
    }

    /// Whether ``close()`` has been called.
    public var isClosed: Bool { handle == nil }

    /// Closes the socket; later calls do nothing.
    ///
    /// Unsent messages are kept for the linger period in the background; the context's
    /// ``ZMQContext/terminate()`` waits for that.
    public func close() {
        guard let handle else { return }
        self.handle = nil
        zmq_close(handle)
    }

    /// Binds to an endpoint such as `tcp://127.0.0.1:*`, `ipc:///path` or `inproc://name`.
    ///
    /// - Parameter endpoint: The endpoint; read ``lastEndpoint`` for the port chosen for `*`.
    /// - Throws: ``ZMQError``, e.g. ``ZMQError/Code-swift.struct/addressInUse`` or
    ///   ``ZMQError/Code-swift.struct/protocolNotSupported``.
    public func bind(_ endpoint: String) throws(ZMQError) {
        try call("bind \(endpoint)") { zmq_bind($0, endpoint) }
    }

    /// Connects to an endpoint; libzmq connects (and reconnects) in the background.
    ///
    /// - Parameter endpoint: The endpoint to connect to.
    /// - Throws: ``ZMQError`` if the endpoint is malformed or its transport unsupported.
    public func connect(_ endpoint: String) throws(ZMQError) {
        try call("connect \(endpoint)") { zmq_connect($0, endpoint) }
    }

    /// Stops listening on an endpoint given to ``bind(_:)`` (use ``lastEndpoint`` for `*` ports).
    ///
    /// - Parameter endpoint: The endpoint to unbind.
    /// - Throws: ``ZMQError`` with ``ZMQError/Code-swift.struct/notFound`` if it was not bound.
    public func unbind(_ endpoint: String) throws(ZMQError) {
        try call("unbind \(endpoint)") { zmq_unbind($0, endpoint) }
    }

    /// Drops a connection made with ``connect(_:)``.
    ///
    /// - Parameter endpoint: The endpoint to disconnect from.
    /// - Throws: ``ZMQError`` with ``ZMQError/Code-swift.struct/notFound`` if it was not connected.
    public func disconnect(_ endpoint: String) throws(ZMQError) {
        try call("disconnect \(endpoint)") { zmq_disconnect($0, endpoint) }
    }

    /// The open libzmq handle, or a ``ZMQError/Code-swift.struct/notSocket`` error after close.
    func openHandle(_ operation: @autoclosure () -> String) throws(ZMQError) -> UnsafeMutableRawPointer {
        guard let handle else { throw ZMQError.closed(operation()) }
        return handle
    }

    /// Runs a libzmq call that returns 0 or -1 and turns -1 into a ``ZMQError``.
    private func call(_ operation: String, _ body: (UnsafeMutableRawPointer) -> Int32) throws(ZMQError) {
        let handle = try openHandle(operation)
        guard body(handle) == 0 else { throw ZMQError.last(operation) }
    }
}

/// A socket belongs to the one thread that uses it: libzmq sockets are not thread-safe.
@available(*, unavailable)
extension ZMQSocket: Sendable {}
