import CZeroMQ

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Multipart send and receive.
///
/// ZeroMQ delivers a multipart message atomically: all frames or none. Sends return `false` and
/// receives return `nil` for `EAGAIN` (nothing to receive, a timeout, or the high-water mark),
/// `EINTR` is retried, and `ETERM` throws ``ZMQError/Code-swift.struct/terminated`` so loops can exit.
extension ZMQSocket {
    /// Sends a multipart message: every frame but the last is sent with `ZMQ_SNDMORE`.
    ///
    /// - Parameters:
    ///   - frames: The frames, at least one; each may be empty.
    ///   - dontWait: Fail with `false` instead of blocking when the message cannot be queued.
    /// - Returns: `true` when queued; `false` when libzmq reported `EAGAIN` for the first frame
    ///   (`dontWait`, the high-water mark, a send timeout, or no peer), in which case nothing was sent.
    /// - Throws: ``ZMQError`` for an empty frame list (`invalidArgument`), a closed socket,
    ///   ``ZMQError/Code-swift.struct/hostUnreachable`` from a ROUTER with `ROUTER_MANDATORY`,
    ///   ``ZMQError/Code-swift.struct/terminated``, or `again` if libzmq refused a frame after the first.
    public func send(_ frames: [[UInt8]], dontWait: Bool = false) throws(ZMQError) -> Bool {
        guard !frames.isEmpty else {
            throw ZMQError(code: .invalidArgument, message: "a message needs at least one frame", operation: "send")
        }
        let handle = try openHandle("send")
        let last = frames.count - 1
        for (index, frame) in frames.enumerated() {
            let more = index < last
            // Array.withUnsafeBytes only rethrows untyped errors, so carry ours out in a Result.
            let sent = frame.withUnsafeBytes { bytes in
                Result { () throws(ZMQError) -> Bool in
                    try Self.sendFrame(handle, bytes, more: more, dontWait: dontWait, operation: "send")
                }
            }
            if try !sent.get() {
                guard index == 0 else {
                    // libzmq never applies the high-water mark inside a message; stay loud if it ever does.
                    throw ZMQError(
                        code: .again,
                        message: "frame \(index + 1) of \(frames.count) refused after the first was queued",
                        operation: "send"
                    )
                }
                return false
            }
        }
        return true
    }

    /// Sends one frame of a message, copying it into libzmq.
    ///
    /// - Parameters:
    ///   - frame: The bytes; libzmq copies them before returning.
    ///   - more: `true` if more frames of the same message follow (`ZMQ_SNDMORE`).
    ///   - dontWait: Fail with `false` instead of blocking.
    /// - Returns: `false` on `EAGAIN`. After a `more` frame was accepted, the caller must finish
    ///   the message: the next `false` leaves the socket mid-message.
    /// - Throws: ``ZMQError`` as for ``send(_:dontWait:)``.
    public func send(frame: UnsafeRawBufferPointer, more: Bool, dontWait: Bool = false) throws(ZMQError) -> Bool {
        let handle = try openHandle("send")
        return try Self.sendFrame(handle, frame, more: more, dontWait: dontWait, operation: "send")
    }

    /// Receives a whole multipart message, copying each frame out of libzmq.
    ///
    /// - Parameter dontWait: Return `nil` at once instead of waiting when nothing is queued.
    /// - Returns: The frames (at least one), or `nil` on `EAGAIN`: nothing queued with
    ///   `dontWait`, or the receive timeout expired.
    /// - Throws: ``ZMQError``: a closed socket, ``ZMQError/Code-swift.struct/terminated``,
    ///   ``ZMQError/Code-swift.struct/invalidState`` (e.g. REQ receiving before sending).
    public func receiveMultipart(dontWait: Bool = false) throws(ZMQError) -> [[UInt8]]? {
        try receiveMultipart(dontWait: dontWait) { frames in frames.map { Array($0) } }
    }

    /// Receives a whole multipart message and lends its frames to `body` without copying.
    ///
    /// The buffers point into libzmq's messages, which are closed when `body` returns: do not
    /// let them escape. Return a `Result` (or any value) from `body` if handling can fail.
    ///
    /// - Parameters:
    ///   - dontWait: Return `nil` at once instead of waiting when nothing is queued.
    ///   - body: Called once with every frame of the message, in order.
    /// - Returns: What `body` returned, or `nil` on `EAGAIN` (then `body` is not called).
    /// - Throws: ``ZMQError`` as for ``receiveMultipart(dontWait:)``.
    public func receiveMultipart<Value>(
        dontWait: Bool = false,
        _ body: ([UnsafeRawBufferPointer]) -> Value
    ) throws(ZMQError) -> Value? {
        try receiveMultipart(dontWait: dontWait, property: nil) { frames, _ in body(frames) }
    }

    /// Receives a whole multipart message and lends `body` its frames and one metadata property
    /// of the message (`zmq_msg_gets`), e.g. `"User-Id"`, which a ZAP handler set for the peer.
    ///
    /// - Parameters:
    ///   - dontWait: Return `nil` at once instead of waiting when nothing is queued.
    ///   - property: The property to read from the message's last frame; `nil` reads none.
    ///   - body: Called once with every frame of the message and the property's value (`nil`
    ///     when the connection has no such property).
    /// - Returns: What `body` returned, or `nil` on `EAGAIN`.
    /// - Throws: ``ZMQError`` as for ``receiveMultipart(dontWait:)``.
    public func receiveMultipart<Value>(
        dontWait: Bool = false,
        property: String?,
        _ body: ([UnsafeRawBufferPointer], String?) -> Value
    ) throws(ZMQError) -> Value? {
        let handle = try openHandle("receive")
        // Take the pool so a receive from inside `body` gets its own messages.
        var messages = messagePool
        messagePool = []
        var initialized = 0
        defer {
            for message in messages[..<initialized] {
                zmq_msg_close(message)
            }
            messagePool.append(contentsOf: messages)
        }
        repeat {
            if initialized == messages.count {
                messages.append(.allocate(capacity: 1))
            }
            let message = messages[initialized]
            zmq_msg_init(message)
            initialized += 1
            let first = initialized == 1
            // Later frames of a message are already queued (atomic delivery); never wait for them.
            guard try Self.receiveFrame(handle, into: message, dontWait: dontWait || !first) else {
                guard first else {
                    throw ZMQError(
                        code: .again,
                        message: "frame \(initialized) of a multipart message was not queued",
                        operation: "receive"
                    )
                }
                return nil
            }
        } while zmq_msg_more(messages[initialized - 1]) != 0
        let frames = messages[..<initialized].map { message in
            UnsafeRawBufferPointer(start: zmq_msg_data(message), count: zmq_msg_size(message))
        }
        let value = property.flatMap { name in
            zmq_msg_gets(messages[initialized - 1], name).map { String(cString: $0) }
        }
        return body(frames, value)
    }

    // MARK: - One frame

    /// `zmq_send` with EINTR retried; `false` on EAGAIN.
    private static func sendFrame(
        _ handle: UnsafeMutableRawPointer,
        _ frame: UnsafeRawBufferPointer,
        more: Bool,
        dontWait: Bool,
        operation: String
    ) throws(ZMQError) -> Bool {
        let flags = (more ? ZMQ_SNDMORE : 0) | (dontWait ? ZMQ_DONTWAIT : 0)
        // libzmq wants a non-null pointer even for an empty frame.
        var empty: UInt8 = 0
        return try withUnsafeMutablePointer(to: &empty) { (placeholder) throws(ZMQError) -> Bool in
            let base = frame.baseAddress ?? UnsafeRawPointer(placeholder)
            while true {
                if zmq_send(handle, base, frame.count, flags) >= 0 { return true }
                let error = zmq_errno()
                switch error {
                case EINTR: continue
                case EAGAIN: return false
                default: throw ZMQError(errno: error, operation: operation)
                }
            }
        }
    }

    /// `zmq_msg_recv` into an initialized message, EINTR retried; `false` on EAGAIN.
    private static func receiveFrame(
        _ handle: UnsafeMutableRawPointer,
        into message: UnsafeMutablePointer<zmq_msg_t>,
        dontWait: Bool
    ) throws(ZMQError) -> Bool {
        let flags = dontWait ? ZMQ_DONTWAIT : 0
        while true {
            if zmq_msg_recv(message, handle, flags) >= 0 { return true }
            let error = zmq_errno()
            switch error {
            case EINTR: continue
            case EAGAIN: return false
            default: throw ZMQError(errno: error, operation: "receive")
            }
        }
    }
}
