import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import ReceiptsReplication
import Synchronization

/// etcd's JSON gateway over HTTP/1.1 on swift-nio: unary calls, once-answered streams (keepalive)
/// and long streams (watch), every failure a `CoordinationError` naming the call and the endpoint
/// (deploy/REPLICATION.md, section 3.1).
///
/// Each call is one POST on a connection of its own, closed when the call ends, fails, times out
/// or is cancelled: the calls are a keepalive per TTL/3 and a few transactions per failover, so a
/// connection's setup costs nothing that matters, and no call can find a connection that an
/// earlier one left in a bad state. (async-http-client did this before, at 42% of the cold
/// release build: BoringSSL and HTTP/2 came with it for a TLS that etcd here does not use yet.)
///
/// With several endpoints (the members of an etcd cluster), calls go to one of them until a call
/// to it gets no answer, or a server error (a member cut off from its cluster answers 503 "no
/// leader"); the next call goes to the next endpoint. A call is never retried here: a
/// transaction whose answer was lost may have been applied, and only the caller
/// knows how to find out (read the state again).
final class EtcdGateway: Sendable {
    /// The largest unary answer read; the ordinal's few small keys are far smaller.
    private static let maximumAnswerBytes = 4 << 20

    private let endpoints: [GatewayEndpoint]
    private let connectTimeout: Duration
    private let preferred = Atomic<Int>(0)
    /// The connections of the calls in flight, closed by `shutdown`; nil once shut down.
    private let open = Mutex<[ObjectIdentifier: any Channel]?>([:])

    /// A gateway to `endpoints`.
    ///
    /// - Parameters:
    ///   - endpoints: etcd's client URLs (`http://host:port`), at least one.
    ///   - connectTimeout: How long a connection may take to open.
    /// - Throws: `CoordinationError` `.invalidUse` for an endpoint that is not `http://host:port`.
    init(endpoints: [String], connectTimeout: Duration) throws(CoordinationError) {
        self.endpoints = try endpoints.map { endpoint throws(CoordinationError) in try GatewayEndpoint(endpoint) }
        self.connectTimeout = connectTimeout
    }

    /// Posts `body` to `path` and decodes the answer.
    ///
    /// - Parameters:
    ///   - name: The call, for error messages (`lease grant`, `campaign`).
    ///   - path: The gateway path (`/v3/kv/txn`).
    ///   - body: The request.
    ///   - timeout: How long the whole call may take.
    /// - Returns: The answer.
    /// - Throws: `CoordinationError` when no answer came in time, the answer is an HTTP error
    ///   (its `{"error": …, "code": …}` in the message), or it cannot be decoded.
    func call<Response: Decodable & Sendable>(
        _ name: String,
        _ path: String,
        _ body: some Encodable,
        timeout: Duration
    ) async throws(CoordinationError) -> Response {
        let (endpoint, bytes) = try await post(name, path, body, timeout: timeout)
        return try Self.decode(Response.self, bytes, name: name, at: endpoint + path)
    }

    /// Posts `body` to a streaming `path` that answers once per request (`/v3/lease/keepalive`
    /// with one request in the body), and decodes that one message.
    ///
    /// - Throws: `CoordinationError` as `call`, or when the stream holds an error or no message.
    func callStreamed<Result: Decodable & Sendable>(
        _ name: String,
        _ path: String,
        _ body: some Encodable,
        timeout: Duration
    ) async throws(CoordinationError) -> Result {
        let (endpoint, bytes) = try await post(name, path, body, timeout: timeout)
        var framing = EtcdStreamFraming()
        let messages: [[UInt8]]
        do {
            messages = try framing.append(bytes)
        } catch {
            throw CoordinationError(.malformed, "\(name): \(endpoint)\(path) answered a malformed stream: \(error)")
        }
        guard let first = messages.first else {
            throw CoordinationError(.malformed, "\(name): \(endpoint)\(path) answered no message")
        }
        return try Self.result(of: first, as: Result.self, name: name, at: endpoint + path)
    }

    /// Posts `body` to a streaming `path` (`/v3/watch`) and hands each message to `receive`
    /// until the stream ends, fails, or the task is cancelled.
    ///
    /// - Throws: `CoordinationError` when the call fails, the stream holds an error or ends (a
    ///   watch never ends by itself), or `receive` throws.
    func stream<Result: Decodable & Sendable>(
        _ name: String,
        _ path: String,
        _ body: some Encodable,
        receive: (Result) async throws(CoordinationError) -> Void
    ) async throws(CoordinationError) {
        let (turn, endpoint) = current
        let url = endpoint.url + path
        let request = try Self.encode(body, for: url)
        var framing = EtcdStreamFraming()
        do {
            try await exchange(endpoint, path, request) { status, part throws(CoordinationError) in
                guard status == 200 else { return }
                let messages: [[UInt8]]
                do {
                    messages = try framing.append(part.readableBytesView)
                } catch {
                    throw CoordinationError(.malformed, "\(name): \(url) answered a malformed stream: \(error)")
                }
                for message in messages {
                    try await receive(try Self.result(of: message, as: Result.self, name: name, at: url))
                }
            } failed: { status, bytes in
                failure(name, url, status: status, bytes, turn: turn)
            }
        } catch let error as CoordinationError {
            throw error
        } catch {
            throw failure(name, url, error, turn: turn)
        }
        throw CoordinationError(.unavailable, "\(name): \(url) ended the stream")
    }

    /// Closes the connections of the calls in flight, which fail, and fails every later call.
    func shutdown() async {
        let channels = open.withLock { open in
            defer { open = nil }
            return open.map { Array($0.values) } ?? []
        }
        for channel in channels { try? await channel.close() }
    }

    /// The endpoint calls go to, with the rotation's count when it was taken.
    private var current: (turn: Int, endpoint: GatewayEndpoint) {
        let turn = preferred.load(ordering: .relaxed)
        return (turn, endpoints[turn % endpoints.count])
    }

    /// Posts and reads the whole answer; an HTTP error status becomes a `CoordinationError`.
    private func post(
        _ name: String,
        _ path: String,
        _ body: some Encodable,
        timeout: Duration
    ) async throws(CoordinationError) -> (endpoint: String, bytes: [UInt8]) {
        let (turn, endpoint) = current
        let url = endpoint.url + path
        let request = try Self.encode(body, for: url)
        let bytes: [UInt8]
        do {
            bytes = try await Self.withDeadline(timeout) { () async throws -> [UInt8] in
                var collected: [UInt8] = []
                try await self.exchange(endpoint, path, request) { _, part throws(CoordinationError) in
                    guard collected.count + part.readableBytes <= Self.maximumAnswerBytes else {
                        throw CoordinationError(
                            .malformed,
                            "\(name): \(url) answered more than \(Self.maximumAnswerBytes) bytes"
                        )
                    }
                    collected += part.readableBytesView
                } failed: { status, answer in
                    self.failure(name, url, status: status, answer, turn: turn)
                }
                return collected
            }
        } catch let error as CoordinationError {
            throw error
        } catch {
            throw failure(name, url, error, turn: turn)
        }
        return (endpoint.url, bytes)
    }

    /// Posts `request` to `path` on a connection of its own and hands each part of a 200 answer's
    /// body to `receive` as it arrives; another status's body is read whole and thrown as
    /// `failed` makes it. The connection closes when the answer ends, anything throws, the task
    /// is cancelled, or the gateway shuts down.
    private func exchange(
        _ endpoint: GatewayEndpoint,
        _ path: String,
        _ request: [UInt8],
        receive: (_ status: UInt, _ part: ByteBuffer) async throws(CoordinationError) -> Void,
        failed: (_ status: UInt, _ body: [UInt8]) -> CoordinationError
    ) async throws {
        guard open.withLock({ $0 != nil }) else {
            throw CoordinationError(.invalidUse, "the etcd gateway is shut down")
        }
        // TCP keepalives probe an idle connection after 2 s, every second, 3 times: a watch on an
        // endpoint whose machine died without a reset fails within about 5 s instead of never.
        let connection = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(Self.timeAmount(connectTimeout))
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(.tcpOption(NIOBSDSocket.Option(rawValue: TCP_KEEPIDLE)), value: 2)
            .channelOption(.tcpOption(NIOBSDSocket.Option(rawValue: TCP_KEEPINTVL)), value: 1)
            .channelOption(.tcpOption(NIOBSDSocket.Option(rawValue: TCP_KEEPCNT)), value: 3)
            .connect(host: endpoint.host, port: endpoint.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(
                        wrappingChannelSynchronously: channel
                    )
                }
            }
        let channel = connection.channel
        let key = ObjectIdentifier(channel)
        let registered = open.withLock { open in
            guard open != nil else { return false }
            open?[key] = channel
            return true
        }
        guard registered else {
            try? await channel.close()
            throw CoordinationError(.invalidUse, "the etcd gateway is shut down")
        }
        defer { _ = open.withLock { $0?.removeValue(forKey: key) } }
        try await withTaskCancellationHandler {
            try await connection.executeThenClose { inbound, outbound in
                var head = HTTPRequestHead(version: .http1_1, method: .POST, uri: path)
                head.headers.add(name: "Host", value: endpoint.hostHeader)
                head.headers.add(name: "Content-Type", value: "application/json")
                head.headers.add(name: "Content-Length", value: "\(request.count)")
                head.headers.add(name: "Connection", value: "close")
                // One write, one flush: etcd answers once it has read Content-Length bytes and then
                // closes, so a separate write of the end could find the connection closed (CI saw
                // "I/O on closed channel" on a range call).
                try await outbound.write(
                    contentsOf: [.head(head), .body(.byteBuffer(ByteBuffer(bytes: request))), .end(nil)]
                )
                var status: UInt = 0
                var errorBody: [UInt8] = []
                for try await part in inbound {
                    switch part {
                    case .head(let answer):
                        status = answer.status.code
                    case .body(let buffer) where status == 200:
                        try await receive(status, buffer)
                    case .body(let buffer):
                        if errorBody.count < Self.maximumAnswerBytes { errorBody += buffer.readableBytesView }
                    case .end:
                        if status != 200 { throw failed(status, errorBody) }
                        return
                    }
                }
                throw AnswerCutShort()
            }
        } onCancel: {
            channel.close(promise: nil)
        }
    }

    /// Runs `operation`, cancelled and failed with `DeadlinePassed` after `timeout`.
    private static func withDeadline<Value: Sendable>(
        _ timeout: Duration,
        _ operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await withThrowingTaskGroup(of: Value?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw DeadlinePassed(timeout: timeout) }
            return value
        }
    }

    /// The connection closed before the answer ended.
    private struct AnswerCutShort: Error, CustomStringConvertible {
        var description: String { "the connection closed before the answer ended" }
    }

    /// A call took longer than its timeout.
    private struct DeadlinePassed: Error, CustomStringConvertible {
        var timeout: Duration
        var description: String { "no answer within \(timeout)" }
    }

    /// A call that got no answer: the next call goes to the endpoint after the one it used, unless
    /// the caller cancelled it.
    private func failure(_ name: String, _ url: String, _ error: any Error, turn: Int) -> CoordinationError {
        if !Task.isCancelled { rotate(from: turn) }
        return CoordinationError(.unavailable, "\(name): no answer from \(url)", cause: error)
    }

    /// An HTTP error answer; a server error (an etcd member cut off from its cluster answers 503
    /// "no leader" to every call) moves the next call to the next endpoint too.
    private func failure(_ name: String, _ url: String, status: UInt, _ body: [UInt8], turn: Int) -> CoordinationError {
        if status >= 500 { rotate(from: turn) }
        return Self.httpError(name, url, status, body)
    }

    /// Moves calls from the endpoint of `turn` to the next one: once, however many calls to it
    /// fail together, and not past a rotation made meanwhile.
    private func rotate(from turn: Int) {
        guard endpoints.count > 1 else { return }
        _ = preferred.compareExchange(expected: turn, desired: turn + 1, ordering: .relaxed)
    }

    private static func encode(_ body: some Encodable, for url: String) throws(CoordinationError) -> [UInt8] {
        do {
            return Array(try JSONEncoder().encode(body))
        } catch {
            throw CoordinationError(.invalidUse, "cannot encode the request to \(url)", cause: error)
        }
    }

    /// An HTTP error status with the gateway's `{"error": …, "code": …}` body.
    static func httpError(
        _ name: String,
        _ url: String,
        _ status: UInt,
        _ body: [UInt8]
    )
        -> CoordinationError
    {
        let decoded = try? JSONDecoder().decode(EtcdMessages.ErrorBody.self, from: Data(body))
        let detail = decoded?.description ?? String(decoding: body.prefix(300), as: UTF8.self)
        return CoordinationError(
            EtcdMessages.code(grpcCode: decoded?.code, message: decoded?.message ?? decoded?.error),
            "\(name): \(url) answered HTTP \(status): \(detail)"
        )
    }

    /// The `result` of one stream message, or its `error` as a `CoordinationError`.
    static func result<Result: Decodable & Sendable>(
        of message: [UInt8],
        as type: Result.Type,
        name: String,
        at url: String
    ) throws(CoordinationError) -> Result {
        let decoded = try decode(EtcdMessages.StreamMessage<Result>.self, message, name: name, at: url)
        if let error = decoded.error {
            throw CoordinationError(
                EtcdMessages.code(grpcCode: error.grpcCode, message: error.message),
                "\(name): \(url) answered an error in its stream: \(error.description)"
            )
        }
        guard let result = decoded.result else {
            throw CoordinationError(.malformed, "\(name): \(url) answered a stream message without a result")
        }
        return result
    }

    static func decode<Value: Decodable>(
        _ type: Value.Type,
        _ bytes: [UInt8],
        name: String,
        at url: String
    ) throws(CoordinationError) -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(bytes))
        } catch {
            let text = String(decoding: bytes.prefix(300), as: UTF8.self)
            throw CoordinationError(.malformed, "\(name): \(url) answered what is not a \(type): \(text)", cause: error)
        }
    }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// An etcd client URL, `http://host:port`, taken apart.
struct GatewayEndpoint: Sendable {
    /// The URL without a trailing slash, for messages.
    let url: String
    let host: String
    let port: Int
    /// The `Host` header: `host:port`, an IPv6 address in brackets.
    let hostHeader: String

    /// - Throws: `CoordinationError` `.invalidUse` for anything but `http://host:port`.
    init(_ text: String) throws(CoordinationError) {
        let url = text.hasSuffix("/") ? String(text.dropLast()) : text
        guard url.hasPrefix("http://") else {
            throw CoordinationError(
                .invalidUse,
                "etcd: the endpoint \"\(text)\" is not an http:// URL (receiptd does not speak TLS to etcd yet)"
            )
        }
        let authority = url.dropFirst("http://".count)
        let host: Substring
        let port: Substring
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = authority[authority.index(after: authority.startIndex)..<close]
            port = authority[close...].dropFirst().drop { $0 == ":" }
        } else {
            let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw CoordinationError(.invalidUse, "etcd: the endpoint \"\(text)\" is not http://host:port")
            }
            (host, port) = (parts[0], parts[1])
        }
        guard !host.isEmpty, !host.contains("/"), let number = Int(port), (1...65535).contains(number) else {
            throw CoordinationError(.invalidUse, "etcd: the endpoint \"\(text)\" is not http://host:port")
        }
        self.url = url
        self.host = String(host)
        self.port = number
        self.hostHeader = String(authority)
    }
}
