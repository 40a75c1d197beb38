import ZeroMQ

/// A socket that connects to its endpoint the first time it is used, so a client that only
/// queries never knocks on the ingest endpoint, and one that only sends never knocks on the
/// query endpoint (with CURVE, a key not listed for an endpoint is refused and counted there).
final class LazyConnection {
    let socket: ZMQSocket
    let endpoint: String
    private var isConnected = false

    init(socket: ZMQSocket, endpoint: String) {
        self.socket = socket
        self.endpoint = endpoint
    }

    /// The socket, connected.
    func connected() throws(ZMQError) -> ZMQSocket {
        if !isConnected {
            try socket.connect(endpoint)
            isConnected = true
        }
        return socket
    }
}
