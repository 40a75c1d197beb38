import ArgumentParser
import ZeroMQ

/// One request, one reply over a REQ socket, with a deadline.
struct RequestClient {
    let endpoint: String
    let timeoutMilliseconds: Int32

    /// Sends `body` and returns the reply body.
    /// - Throws: a `ValidationError`-style message if nothing answers in time.
    func request(_ body: [UInt8]) throws -> [UInt8] {
        let context = try ZMQContext()
        defer { context.terminate() }
        let socket = try ZMQSocket(context: context, type: .req)
        defer { socket.close() }
        try socket.setLinger(milliseconds: 0)
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        try socket.connect(endpoint)
        _ = try socket.send([body])
        guard let reply = try socket.receiveMultipart(), let last = reply.last else {
            throw CtlError("no reply from \(endpoint) within \(timeoutMilliseconds) ms")
        }
        return last
    }
}
