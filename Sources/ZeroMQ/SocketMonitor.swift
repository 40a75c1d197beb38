import CZeroMQ

/// Connection events a socket monitor reports (libzmq's `ZMQ_EVENT_*`: disconnections and the
/// handshake ones).
public struct MonitorEvents: OptionSet, Sendable, Hashable {
    public let rawValue: Int32

    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// A connection was made (a connecting socket reached its peer, again after the peer restarted).
    public static let connected = MonitorEvents(rawValue: ZMQ_EVENT_CONNECTED)
    /// A connection closed: the peer closed it, or libzmq did (a message over `ZMQ_MAXMSGSIZE`,
    /// a protocol error). libzmq does not say which.
    public static let disconnected = MonitorEvents(rawValue: ZMQ_EVENT_DISCONNECTED)
    /// The handshake failed for a reason libzmq does not detail (e.g. the peer went away).
    public static let handshakeFailedNoDetail = MonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
    /// The security handshake completed.
    public static let handshakeSucceeded = MonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
    /// The peer broke the protocol: another mechanism (plaintext to a CURVE server), bad
    /// cryptography (a wrong server key), a malformed command.
    public static let handshakeFailedProtocol = MonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
    /// The ZAP handler refused the peer's credentials.
    public static let handshakeFailedAuth = MonitorEvents(rawValue: ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
    /// Every way a handshake can fail.
    public static let handshakeFailures: MonitorEvents = [
        .handshakeFailedNoDetail, .handshakeFailedProtocol, .handshakeFailedAuth,
    ]
}

/// One event read from a monitor socket.
public struct MonitorEvent: Sendable, Hashable {
    /// Which event (one flag).
    public var event: MonitorEvents
    /// The event's value: for handshake failures, libzmq's protocol error code or the ZAP status
    /// code; for a disconnection, the connection's file descriptor.
    public var value: UInt32
    /// The endpoint the event concerns.
    public var address: String

    /// ``value`` of a protocol failure when the peer uses another mechanism (e.g. plaintext to a CURVE server).
    public static let mechanismMismatch = UInt32(ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
    /// ``value`` of a protocol failure when a CURVE box does not open (e.g. the client has another server key).
    public static let cryptographicError = UInt32(ZMQ_PROTOCOL_ERROR_ZMTP_CRYPTOGRAPHIC)

    /// Parses the two frames of a libzmq monitor message (16-bit event, 32-bit value, then the
    /// endpoint), or returns nil for anything else.
    public init?(frames: [[UInt8]]) {
        guard frames.count == 2, frames[0].count == 6 else { return nil }
        let head = frames[0]
        event = MonitorEvents(rawValue: Int32(UInt16(head[0]) | UInt16(head[1]) << 8))
        value = head[2...5].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        address = String(decoding: frames[1], as: UTF8.self)
    }
}

extension ZMQSocket {
    /// Starts a monitor (`zmq_socket_monitor`): libzmq binds a PAIR socket at `endpoint`
    /// (`inproc://…`) and sends it the chosen events; connect a ``SocketType/pair`` socket of the
    /// same context there and read ``MonitorEvent``s from it.
    public func monitor(_ endpoint: String, events: MonitorEvents) throws(ZMQError) {
        let handle = try openHandle("monitor \(endpoint)")
        guard zmq_socket_monitor(handle, endpoint, events.rawValue) == 0 else {
            throw ZMQError.last("monitor \(endpoint)")
        }
    }

    /// Starts a monitor of the chosen events at `endpoint` (``monitor(_:events:)``) and returns
    /// the ``SocketType/pair`` socket, of this socket's context, that reads it
    /// (``receiveMonitorEvents()``); the caller closes it. Start it before this socket connects,
    /// so that it sees the connection from its start.
    public func openMonitor(_ endpoint: String, events: MonitorEvents) throws(ZMQError) -> ZMQSocket {
        try monitor(endpoint, events: events)
        let pair = try ZMQSocket(context: context, type: .pair)
        do {
            try pair.connect(endpoint)
        } catch {
            pair.close()
            throw error
        }
        return pair
    }

    /// On a monitor's ``SocketType/pair`` socket: every event queued, read without waiting
    /// (messages that are no monitor event are skipped).
    public func receiveMonitorEvents() throws(ZMQError) -> [MonitorEvent] {
        var events: [MonitorEvent] = []
        while let frames = try receiveMultipart(dontWait: true) {
            if let event = MonitorEvent(frames: frames) { events.append(event) }
        }
        return events
    }
}
