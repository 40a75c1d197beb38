import CZeroMQ

/// Typed socket options: each helper passes the C type libzmq expects for that option
/// (`int`, `int64_t` or bytes), so a value can never be passed where a pointer is wanted.
extension ZMQSocket {
    /// Sets `ZMQ_SNDHWM`: how many outgoing messages are queued per peer before sends block or drop.
    public func setSendHighWaterMark(_ messages: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_SNDHWM, messages, "ZMQ_SNDHWM")
    }

    /// `ZMQ_SNDHWM` as libzmq reports it.
    public var sendHighWaterMark: Int32 {
        get throws(ZMQError) { try int32Option(ZMQ_SNDHWM, "ZMQ_SNDHWM") }
    }

    /// Sets `ZMQ_RCVHWM`: how many incoming messages are queued per peer before the peer is pushed back.
    public func setReceiveHighWaterMark(_ messages: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_RCVHWM, messages, "ZMQ_RCVHWM")
    }

    /// `ZMQ_RCVHWM` as libzmq reports it.
    public var receiveHighWaterMark: Int32 {
        get throws(ZMQError) { try int32Option(ZMQ_RCVHWM, "ZMQ_RCVHWM") }
    }

    /// Sets `ZMQ_XPUB_VERBOSE` on an XPUB: every subscriber's subscription is passed up, not
    /// only the first one to a topic (unsubscriptions still come once, from the last).
    public func setXPubVerbose(_ verbose: Bool) throws(ZMQError) {
        try setInt32Option(ZMQ_XPUB_VERBOSE, verbose ? 1 : 0, "ZMQ_XPUB_VERBOSE")
    }

    /// Sets `ZMQ_LINGER`: how long `close` keeps unsent messages (-1 forever, 0 discard at once).
    public func setLinger(milliseconds: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_LINGER, milliseconds, "ZMQ_LINGER")
    }

    /// `ZMQ_LINGER` in milliseconds.
    public var linger: Int32 {
        get throws(ZMQError) { try int32Option(ZMQ_LINGER, "ZMQ_LINGER") }
    }

    /// Sets `ZMQ_MAXMSGSIZE` (an `int64_t`): a peer sending a larger message is disconnected
    /// and the message is never delivered. -1 means no limit.
    public func setMaxMessageSize(_ bytes: Int64) throws(ZMQError) {
        try setInt64Option(ZMQ_MAXMSGSIZE, bytes, "ZMQ_MAXMSGSIZE")
    }

    /// `ZMQ_MAXMSGSIZE` in bytes (-1 = unlimited).
    public var maxMessageSize: Int64 {
        get throws(ZMQError) { try int64Option(ZMQ_MAXMSGSIZE, "ZMQ_MAXMSGSIZE") }
    }

    /// Sets `ZMQ_RCVTIMEO`: how long a blocking receive waits before returning `nil` (-1 forever).
    public func setReceiveTimeout(milliseconds: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_RCVTIMEO, milliseconds, "ZMQ_RCVTIMEO")
    }

    /// `ZMQ_RCVTIMEO` in milliseconds.
    public var receiveTimeout: Int32 {
        get throws(ZMQError) { try int32Option(ZMQ_RCVTIMEO, "ZMQ_RCVTIMEO") }
    }

    /// Sets `ZMQ_SNDTIMEO`: how long a blocking send waits before returning `false` (-1 forever).
    public func setSendTimeout(milliseconds: Int32) throws(ZMQError) {
        try setInt32Option(ZMQ_SNDTIMEO, milliseconds, "ZMQ_SNDTIMEO")
    }

    /// `ZMQ_SNDTIMEO` in milliseconds.
    public var sendTimeout: Int32 {
        get throws(ZMQError) { try int32Option(ZMQ_SNDTIMEO, "ZMQ_SNDTIMEO") }
    }

    /// Sets `ZMQ_IMMEDIATE`: queue messages only to completed connections, so a send to a
    /// peer that is not there yet fails (or blocks) instead of waiting in a queue.
    public func setImmediate(_ on: Bool) throws(ZMQError) {
        try setInt32Option(ZMQ_IMMEDIATE, on ? 1 : 0, "ZMQ_IMMEDIATE")
    }

    /// `ZMQ_IMMEDIATE`.
    public var immediate: Bool {
        get throws(ZMQError) { try int32Option(ZMQ_IMMEDIATE, "ZMQ_IMMEDIATE") != 0 }
    }

    /// Sets `ZMQ_ROUTER_MANDATORY` on a ROUTER: a reply to an unknown routing id throws
    /// ``ZMQError/Code-swift.struct/hostUnreachable`` instead of vanishing silently.
    public func setRouterMandatory(_ on: Bool) throws(ZMQError) {
        try setInt32Option(ZMQ_ROUTER_MANDATORY, on ? 1 : 0, "ZMQ_ROUTER_MANDATORY")
    }

    /// Sets `ZMQ_ROUTING_ID` (formerly `ZMQ_IDENTITY`): the id a ROUTER peer sees for this socket.
    ///
    /// - Parameter id: 1 to 255 bytes, not starting with a zero byte; set before connecting.
    /// - Throws: ``ZMQError/Code-swift.struct/invalidArgument`` for an empty or over-long id.
    public func setRoutingID(_ id: [UInt8]) throws(ZMQError) {
        try setBytesOption(ZMQ_ROUTING_ID, id, "ZMQ_ROUTING_ID")
    }

    /// Sets `ZMQ_ROUTING_ID` from a string's UTF-8 bytes.
    public func setRoutingID(_ id: String) throws(ZMQError) {
        try setRoutingID(Array(id.utf8))
    }

    /// `ZMQ_ROUTING_ID`: the id set with ``setRoutingID(_:)-([UInt8])``, or empty.
    public var routingID: [UInt8] {
        get throws(ZMQError) { try bytesOption(ZMQ_ROUTING_ID, capacity: 256, "ZMQ_ROUTING_ID") }
    }

    /// Subscribes a SUB socket to messages whose first frame starts with `prefix` (empty = all).
    ///
    /// Prefer a few prefixes over many exact topics: a SUB holding more than ~1000 topics can
    /// lose subscriptions on reconnect (libzmq #2258).
    /// - Throws: ``ZMQError/Code-swift.struct/invalidArgument`` on a socket that is not SUB.
    public func subscribe(_ prefix: [UInt8]) throws(ZMQError) {
        try setBytesOption(ZMQ_SUBSCRIBE, prefix, "ZMQ_SUBSCRIBE")
    }

    /// Subscribes to a string prefix (its UTF-8 bytes).
    public func subscribe(_ prefix: String) throws(ZMQError) {
        try subscribe(Array(prefix.utf8))
    }

    /// Removes one earlier ``subscribe(_:)-([UInt8])`` of exactly this prefix.
    public func unsubscribe(_ prefix: [UInt8]) throws(ZMQError) {
        try setBytesOption(ZMQ_UNSUBSCRIBE, prefix, "ZMQ_UNSUBSCRIBE")
    }

    /// Removes one earlier subscription to this string prefix.
    public func unsubscribe(_ prefix: String) throws(ZMQError) {
        try unsubscribe(Array(prefix.utf8))
    }

    /// `ZMQ_LAST_ENDPOINT`: the endpoint last bound, with the real port when bound to `tcp://…:*`.
    public var lastEndpoint: String {
        get throws(ZMQError) {
            let bytes = try bytesOption(ZMQ_LAST_ENDPOINT, capacity: 1024, "ZMQ_LAST_ENDPOINT")
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    // MARK: - Typed setsockopt / getsockopt

    func setInt32Option(_ option: Int32, _ value: Int32, _ name: String) throws(ZMQError) {
        let operation = "setsockopt \(name)"
        let handle = try openHandle(operation)
        var value = value
        guard zmq_setsockopt(handle, option, &value, MemoryLayout<Int32>.size) == 0 else {
            throw ZMQError.last(operation)
        }
    }

    private func setInt64Option(_ option: Int32, _ value: Int64, _ name: String) throws(ZMQError) {
        let operation = "setsockopt \(name)"
        let handle = try openHandle(operation)
        var value = value
        guard zmq_setsockopt(handle, option, &value, MemoryLayout<Int64>.size) == 0 else {
            throw ZMQError.last(operation)
        }
    }

    func setBytesOption(_ option: Int32, _ value: [UInt8], _ name: String) throws(ZMQError) {
        let operation = "setsockopt \(name)"
        let handle = try openHandle(operation)
        let rc = value.withUnsafeBytes { zmq_setsockopt(handle, option, $0.baseAddress, $0.count) }
        guard rc == 0 else { throw ZMQError.last(operation) }
    }

    func int32Option(_ option: Int32, _ name: String) throws(ZMQError) -> Int32 {
        let operation = "getsockopt \(name)"
        let handle = try openHandle(operation)
        var value: Int32 = 0
        var size = MemoryLayout<Int32>.size
        guard zmq_getsockopt(handle, option, &value, &size) == 0 else { throw ZMQError.last(operation) }
        return value
    }

    private func int64Option(_ option: Int32, _ name: String) throws(ZMQError) -> Int64 {
        let operation = "getsockopt \(name)"
        let handle = try openHandle(operation)
        var value: Int64 = 0
        var size = MemoryLayout<Int64>.size
        guard zmq_getsockopt(handle, option, &value, &size) == 0 else { throw ZMQError.last(operation) }
        return value
    }

    private func bytesOption(_ option: Int32, capacity: Int, _ name: String) throws(ZMQError) -> [UInt8] {
        let operation = "getsockopt \(name)"
        let handle = try openHandle(operation)
        var size = capacity
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            if zmq_getsockopt(handle, option, buffer.baseAddress, &size) == 0 {
                count = size
            } else {
                failure = zmq_errno()
                count = 0
            }
        }
        guard failure == 0 else { throw ZMQError(errno: failure, operation: operation) }
        return bytes
    }
}
