import Logging
import ZeroMQ

/// libzmq's socket monitors on the worker's endpoints, owned by the service loop's thread:
/// every closed connection of an endpoint that reads messages (both ingest endpoints and the
/// queries) is counted per endpoint and logged, and with CURVE on, failed handshakes on every
/// endpoint go to the `Authenticator`.
///
/// A closed connection is how libzmq answers a message over its transport bound
/// (`ZMQ_MAXMSGSIZE`, twice `--max-frame-bytes` plus 4 KiB): it reads no further and drops the
/// connection, so no reply can say why. libzmq does not tell that apart from a peer that
/// closed, so every disconnection is counted and logged with that bound named.
final class ConnectionMonitors {
    private var monitors: [(endpoint: ServiceEndpoint, socket: ZMQSocket)] = []
    private let counters: ServiceCounters
    private let logger: Logger
    /// The transport bound, for the log line.
    private let maxMessageBytes: Int64
    /// A reconnecting crowd is counted in full but logged once a second per endpoint.
    private var logged = LogThrottle<ServiceEndpoint>(intervalMilliseconds: 1000)

    init(counters: ServiceCounters, logger: Logger, maxMessageBytes: Int64) {
        self.counters = counters
        self.logger = logger
        self.maxMessageBytes = maxMessageBytes
    }

    /// The monitors' sockets, to poll.
    var sockets: [ZMQSocket] { monitors.map(\.socket) }

    /// Monitors `socket`'s disconnections and/or its failed handshakes (libzmq allows one
    /// monitor per socket, so both go through this one); does nothing if neither is asked.
    func watch(
        _ socket: ZMQSocket,
        as endpoint: ServiceEndpoint,
        disconnections: Bool,
        handshakes: Bool
    ) throws(ZMQError) {
        var events: MonitorEvents = []
        if disconnections {
            events.insert(.disconnected)
            // Registered up front so that it is exported (and alertable) at 0.
            _ = counters.handle(.connectionsClosed, label: endpoint.rawValue)
        }
        if handshakes { events.formUnion(.handshakeFailures) }
        guard !events.isEmpty else { return }
        let address = "inproc://receiptd.monitor.\(endpoint.rawValue)"
        monitors.append((endpoint, try socket.openMonitor(address, events: events)))
    }

    /// Counts and logs every queued event, without waiting; hands handshake failures to
    /// `authenticator`.
    func drain(authenticator: Authenticator?) throws(ZMQError) {
        for (endpoint, monitor) in monitors {
            for event in try monitor.receiveMonitorEvents() {
                if event.event == .disconnected {
                    countDisconnection(on: endpoint, address: event.address)
                } else {
                    authenticator?.count(event, on: endpoint)
                }
            }
        }
    }

    func close() {
        for socket in sockets { socket.close() }
    }

    private func countDisconnection(on endpoint: ServiceEndpoint, address: String) {
        counters.increment(.connectionsClosed, label: endpoint.rawValue)
        guard let unlogged = logged.admit(endpoint) else { return }
        logger.notice(
            "connection closed, by the peer or by libzmq for a message over the transport bound",
            metadata: [
                "endpoint": "\(endpoint.rawValue)",
                "address": "\(address)",
                "transport.max_message_bytes": "\(maxMessageBytes)",
                "connections.closed_unlogged": "\(unlogged)",
            ]
        )
    }
}
