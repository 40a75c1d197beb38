import Logging
import ZeroMQ

/// The client's SUB sockets: one per worker, shared by every subscription, each subscribed to
/// the filters the subscriptions need (``TopicIndex`` counts them). A replicated ordinal's
/// socket connects to every member's PUB endpoint: only its primary publishes, so nothing
/// comes twice, and after a failover the new primary's updates (under a new publisher run,
/// which the Clone repair takes from there) arrive on the same socket.
///
/// A socket is made for a worker when the first subscription starts (every worker the cluster
/// lists, since a conversation moved between workers is published by its new owner) or when a
/// repair follows NOT_OWNER to a worker not listened to yet. It stays until the client shuts
/// down: a PUB filters by topic on its side, so a socket with no filter costs no traffic, and a
/// later subscription does not wait for a new connection.
///
/// Each socket has a monitor that reports its connections: a connection made again (a restarted
/// worker, a failover) may have lost updates that no later update reveals as a gap, so the loop
/// repairs the worker's subscriptions then.
///
/// Owned by the client's loop thread, like the sockets it holds.
final class UpdateListeners {
    /// One SUB connected to one worker's PUB endpoint.
    struct Listener {
        /// The worker's ordinal: updates from it are told apart from another worker's (a
        /// conversation's publisher changes when it moves between workers).
        let worker: Int
        let socket: ZMQSocket
        /// The PAIR that reads the socket's monitor: its connections.
        let monitor: ZMQSocket
    }

    private let configuration: ReceiptsClient.Configuration
    private let context: ZMQContext
    private let logger: Logger
    /// The sockets, in the order they were made.
    private(set) var listeners: [Listener] = []
    private var index = TopicIndex()

    /// No sockets yet.
    /// - Parameters:
    ///   - configuration: The cluster's PUB endpoints and the CURVE keys.
    ///   - context: The loop's context.
    ///   - logger: For a filter that could not be removed.
    init(configuration: ReceiptsClient.Configuration, context: ZMQContext, logger: Logger) {
        self.configuration = configuration
        self.context = context
        self.logger = logger
    }

    /// Makes sure a worker's updates are received, with every filter in use.
    /// - Returns: true if a socket was made (the poll set changes).
    /// - Throws: ``ReceiptsClientError`` `.invalidArgument` for a worker the cluster cannot
    ///   name, `ZMQError` if the socket cannot be set up.
    func listen(to worker: Int) throws -> Bool {
        guard !listeners.contains(where: { $0.worker == worker }) else { return false }
        let members = configuration.cluster.members(of: worker)
        guard !members.isEmpty else {
            throw ReceiptsClientError(.invalidArgument, "no worker \(worker) in the cluster")
        }
        let socket = try ZMQSocket(context: context, type: .sub)
        var monitor: ZMQSocket?
        do {
            // The loop drains these promptly; a gap from a full buffer is repaired anyway.
            try socket.setReceiveHighWaterMark(100_000)
            for filter in index.filters { try socket.subscribe(filter) }
            try configuration.secure(socket)
            let address = "inproc://receipts-client.updates-monitor.\(worker)"
            let pair = try socket.openMonitor(address, events: .connected)
            monitor = pair
            for member in members { try socket.connect(member.publish) }
            listeners.append(Listener(worker: worker, socket: socket, monitor: pair))
        } catch {
            monitor?.close()
            socket.close()
            throw error
        }
        return true
    }

    /// Whether a listener's socket made a connection since the last call (reads its monitor
    /// without waiting).
    func connected(_ listener: Listener) throws(ZMQError) -> Bool {
        try listener.monitor.receiveMonitorEvents().contains { $0.event == .connected }
    }

    /// Adds a subscription, subscribing every socket to its filter if it is new.
    /// - Throws: `ZMQError` if a socket refused the filter (the subscription is not added).
    func add(_ id: UInt64, _ topic: some FilteredTopic) throws(ZMQError) {
        let filters = index.add(id, topic)
        do {
            for listener in listeners {
                for filter in filters { try listener.socket.subscribe(filter) }
            }
        } catch {
            remove(id, topic)
            throw error
        }
    }

    /// Removes a subscription, unsubscribing every socket from its filter once no subscription
    /// uses it.
    func remove(_ id: UInt64, _ topic: some FilteredTopic) {
        let filters = index.remove(id, topic)
        for listener in listeners {
            do {
                for filter in filters { try listener.socket.unsubscribe(filter) }
            } catch {
                logger.warning(
                    "cannot remove a topic filter",
                    metadata: ["receipts.worker": "\(listener.worker)", "error": "\(error)"]
                )
            }
        }
    }

    /// The subscriptions an update published under `topic` is for.
    func subscribers(of topic: UnsafeRawBufferPointer) -> [UInt64] {
        index.subscribers(of: topic)
    }

    /// Closes every socket.
    func close() {
        for listener in listeners {
            listener.socket.close()
            listener.monitor.close()
        }
        listeners = []
    }
}
