import Logging
import ReceiptLog
import ReceiptsReplication
import ReceiptsWire
import Synchronization
import ZeroMQ

/// The primary's `receiptd-ship` thread (deploy/REPLICATION.md, section 4.5): it owns the
/// replication ROUTER and the `Shipper`, takes the standbys' requests, and ships records when
/// the log's durable position moves (its doorbell) or a heartbeat is due. It never touches the
/// engine.
///
/// `@unchecked Sendable`: between `start()` and `stop()` the socket and the shipper belong to
/// the thread alone (handed over across the thread start's memory barrier, given back across
/// the join's); the stop flag is atomic.
final class ShippingThread: @unchecked Sendable {
    private let socket: ZMQSocket
    private let shipper: Shipper
    private let logger: Logger
    private let heartbeatMilliseconds: Int64
    /// Told once when the thread ends on an error: the worker's loop must end too (nothing moves
    /// the gate any more, so nothing more would be acknowledged).
    private let onFailure: @Sendable () -> Void
    /// Where refused requests are counted (`receiptd.frames.invalid{kind}`, as for clients').
    private let counters: ServiceCounters
    /// Refused requests are logged at most once a second per kind; touched by the thread only.
    private var refusalsLogged = LogThrottle<ErrorReply.Code>(intervalMilliseconds: 1000)
    /// Rung when the log's durable position moves.
    let doorbell: Doorbell
    private let stopping = Atomic<Bool>(false)
    /// Touched only by the owner's thread (`start`, `stop`).
    private var thread: JoinableThread

    /// - Parameters:
    ///   - socket: The bound replication ROUTER (`ROUTER_MANDATORY` on); from `start()` to
    ///     `stop()` nothing else may use it.
    ///   - doorbell: Rung by the log's `onDurable`.
    ///   - counters: Where refused requests are counted.
    ///   - onFailure: Told when the thread ends on an error.
    ///   - threads: Starts the `receiptd-ship` thread.
    init(
        socket: ZMQSocket,
        shipper: Shipper,
        doorbell: Doorbell,
        heartbeatMilliseconds: Int64,
        logger: Logger,
        counters: ServiceCounters,
        onFailure: @escaping @Sendable () -> Void,
        threads: ThreadStarter
    ) {
        thread = JoinableThread(name: "receiptd-ship", threads: threads)
        self.counters = counters
        self.onFailure = onFailure
        self.socket = socket
        self.shipper = shipper
        self.doorbell = doorbell
        self.heartbeatMilliseconds = heartbeatMilliseconds
        self.logger = logger
    }

    /// Starts the thread; the socket and the shipper are its from now on.
    /// - Throws: `ServiceError` with code `system` if the thread cannot be started; the socket
    ///   then stays the caller's, and `stop()` has no thread to wait for.
    func start() throws(ServiceError) {
        try thread.start { [self] in run() }
    }

    /// Ends the thread; the socket is the caller's again. Returns at once if the thread is not
    /// running.
    func stop() {
        thread.stop {
            stopping.store(true, ordering: .releasing)
            doorbell.ring()
        }
    }

    private func run() {
        var poller = ZMQPoller()
        let socketItem = poller.add(socket)
        let doorbellItem = poller.add(fileDescriptor: doorbell.fileDescriptor)
        while !stopping.load(ordering: .acquiring) {
            do {
                _ = try poller.poll(timeoutMilliseconds: Int(heartbeatMilliseconds))
                if poller.isReadable(doorbellItem) { doorbell.drain() }
                if poller.isReadable(socketItem) { try receiveAll() }
                shipper.ship(now: ServiceClock.monotonicMilliseconds()) { outgoing in send(outgoing) }
            } catch {
                logger.error("replication endpoint failed; shipping stops", metadata: ["error": "\(error)"])
                onFailure()
                return
            }
        }
    }

    /// Takes every request waiting on the socket.
    private func receiveAll() throws(ZMQError) {
        while let frames = try socket.receiveMultipart(dontWait: true) {
            // A DEALER's message arrives behind its routing id, with no empty delimiter.
            guard let peer = frames.first else { continue }
            let request: ReplicationRequest
            do {
                request = try ReplicationRequest.decode(Array(frames.dropFirst()))
            } catch {
                let code = ErrorReply(error).code
                counters.increment(.framesInvalid, label: "\(code)")
                if let unlogged = refusalsLogged.admit(code) {
                    logger.warning(
                        "replication request refused",
                        metadata: ["error": "\(error)", "requests.refused_unlogged": "\(unlogged)"]
                    )
                }
                continue
            }
            if let answer = shipper.receive(request, from: peer, now: ServiceClock.monotonicMilliseconds()) {
                _ = send(answer)
            }
        }
    }

    /// Sends one message; false when the peer's queue is full. A peer that went away is the
    /// shipper's timeout to notice: the message is dropped.
    private func send(_ outgoing: Shipper.Outgoing) -> Bool {
        do {
            return try socket.send([outgoing.peer] + outgoing.message.encode(), dontWait: true)
        } catch {
            logger.debug("replication message not delivered", metadata: ["error": "\(error)"])
            return true
        }
    }
}
