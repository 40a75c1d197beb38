import CZeroMQ

/// CurveZMQ (RFC 26) and ZAP (RFC 27) on a socket. Set these before `bind` or `connect`.
extension ZMQSocket {
    /// The security mechanism of a socket (`ZMQ_MECHANISM`).
    public enum Mechanism: Sendable, Hashable {
        /// No security (`ZMQ_NULL`).
        case null
        /// User name and password in clear (`ZMQ_PLAIN`).
        case plain
        /// CurveZMQ encryption and authentication (`ZMQ_CURVE`).
        case curve
        /// Another mechanism, by libzmq's number.
        case other(Int32)
    }

    /// Makes this socket a CURVE server (`ZMQ_CURVE_SERVER`, `ZMQ_CURVE_SECRETKEY`): every peer
    /// must be a CURVE client that knows the matching public key; a plaintext peer's handshake fails.
    ///
    /// - Parameters:
    ///   - secretKey: The server's secret key.
    ///   - zapDomain: The `ZMQ_ZAP_DOMAIN` that a ZAP handler sees for this socket's handshakes
    ///     (with a handler bound at `inproc://zeromq.zap.01`, every client key is checked there).
    public func setCurveServer(secretKey: CurveKey, zapDomain: String) throws(ZMQError) {
        try setInt32Option(ZMQ_CURVE_SERVER, 1, "ZMQ_CURVE_SERVER")
        try setBytesOption(ZMQ_CURVE_SECRETKEY, secretKey.bytes, "ZMQ_CURVE_SECRETKEY")
        try setBytesOption(ZMQ_ZAP_DOMAIN, Array(zapDomain.utf8), "ZMQ_ZAP_DOMAIN")
    }

    /// Makes this socket a CURVE client of the server whose public key is in `keys`.
    public func setCurveClient(_ keys: CurveClientKeys) throws(ZMQError) {
        try setBytesOption(ZMQ_CURVE_SERVERKEY, keys.serverPublicKey.bytes, "ZMQ_CURVE_SERVERKEY")
        try setBytesOption(ZMQ_CURVE_PUBLICKEY, keys.publicKey.bytes, "ZMQ_CURVE_PUBLICKEY")
        try setBytesOption(ZMQ_CURVE_SECRETKEY, keys.secretKey.bytes, "ZMQ_CURVE_SECRETKEY")
    }

    /// `ZMQ_MECHANISM`: the security mechanism this socket uses.
    public var mechanism: Mechanism {
        get throws(ZMQError) {
            switch try int32Option(ZMQ_MECHANISM, "ZMQ_MECHANISM") {
            case ZMQ_NULL: .null
            case ZMQ_PLAIN: .plain
            case ZMQ_CURVE: .curve
            case let other: .other(other)
            }
        }
    }
}
