import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// Asks a worker's query endpoint one question at a time over REQ, with a deadline.
final class QueryClient {
    private let context: ZMQContext
    private let endpoint: String
    private var socket: ZMQSocket?

    init(context: ZMQContext, endpoint: String) {
        self.context = context
        self.endpoint = endpoint
    }

    deinit { socket?.close() }

    /// Sends `query` and waits up to `timeoutMilliseconds` for the reply.
    func ask(_ query: Query, timeoutMilliseconds: Int32 = 10_000) throws -> QueryReply {
        let socket =
            try self.socket
            ?? {
                let socket = try ZMQSocket(context: context, type: .req)
                try socket.connect(endpoint)
                self.socket = socket
                return socket
            }()
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        _ = try socket.send([query.encode()])
        guard let reply = try socket.receiveMultipart(), let body = reply.last else {
            // A REQ that missed its reply is stuck: start over with a new socket next time.
            socket.close()
            self.socket = nil
            throw LoadgenError(.timeout, "no reply to \(query) from \(endpoint) within \(timeoutMilliseconds) ms")
        }
        return try QueryReply.decode(body)
    }

    /// Every counter, by "name" or "name{label}".
    func counters() throws -> [String: UInt64] {
        guard case .stats(let counters) = try ask(.stats) else {
            throw LoadgenError(.protocolViolation, "stats query got another reply")
        }
        var byName: [String: UInt64] = [:]
        for counter in counters {
            byName[counter.label.isEmpty ? counter.name : "\(counter.name){\(counter.label)}"] = counter.value
        }
        return byName
    }

    /// Events the worker has applied so far: accepted, duplicate and rejected.
    func eventsHandled() throws -> UInt64 {
        let counters = try counters()
        let rejected = counters.filter { $0.key.hasPrefix("receiptd.events.rejected") }.values.reduce(0, +)
        return (counters["receiptd.events.accepted"] ?? 0) + (counters["receiptd.events.duplicate"] ?? 0) + rejected
    }
}
