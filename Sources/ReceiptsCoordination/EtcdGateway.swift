import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ReceiptsReplication
import Synchronization

/// etcd's JSON gateway over one `HTTPClient`: unary calls, once-answered streams (keepalive) and
/// long streams (watch), every failure a `CoordinationError` naming the call and the endpoint
/// (deploy/REPLICATION.md, section 3.1).
///
/// With several endpoints (the members of an etcd cluster), calls go to one of them until a call
/// to it fails to get an answer; the next call goes to the next endpoint. A call is never
/// retried here: a transaction whose answer was lost may have been applied, and only the caller
/// knows how to find out (read the state again).
final class EtcdGateway: Sendable {
    /// The largest unary answer read; the ordinal's few small keys are far smaller.
    private static let maximumAnswerBytes = 4 << 20

    private let client: HTTPClient
    private let endpoints: [String]
    private let preferred = Atomic<Int>(0)

    /// A gateway to `endpoints` (`http://host:port`, without a path).
    ///
    /// - Parameters:
    ///   - endpoints: etcd's client URLs, at least one.
    ///   - connectTimeout: How long a connection may take to open.
    ///   - logger: For the HTTP client's background activity.
    init(endpoints: [String], connectTimeout: Duration, logger: Logger) {
        self.endpoints = endpoints.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        var configuration = HTTPClient.Configuration()
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: Self.timeAmount(connectTimeout), read: nil)
        configuration.redirectConfiguration = .disallow
        client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: configuration,
            backgroundActivityLogger: logger
        )
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
        let endpoint = currentEndpoint
        let url = endpoint + path
        let response: HTTPClientResponse
        do {
            response = try await client.execute(try Self.request(url, body), deadline: .distantFuture)
        } catch {
            throw failure(name, url, error)
        }
        guard response.status == .ok else {
            let bytes = (try? await response.body.collect(upTo: Self.maximumAnswerBytes)).map(Self.bytes) ?? []
            throw Self.httpError(name, url, response.status.code, bytes)
        }
        var framing = EtcdStreamFraming()
        do {
            for try await chunk in response.body {
                let messages: [[UInt8]]
                do {
                    messages = try framing.append(chunk.readableBytesView)
                } catch {
                    throw CoordinationError(.malformed, "\(name): \(url) answered a malformed stream: \(error)")
                }
                for message in messages {
                    try await receive(try Self.result(of: message, as: Result.self, name: name, at: url))
                }
            }
        } catch let error as CoordinationError {
            throw error
        } catch {
            throw failure(name, url, error)
        }
        throw CoordinationError(.unavailable, "\(name): \(url) ended the stream")
    }

    /// Shuts the HTTP client down; calls in flight fail.
    func shutdown() async {
        try? await client.shutdown()
    }

    private var currentEndpoint: String {
        endpoints[preferred.load(ordering: .relaxed) % endpoints.count]
    }

    /// Posts and reads the whole answer; an HTTP error status becomes a `CoordinationError`.
    private func post(
        _ name: String,
        _ path: String,
        _ body: some Encodable,
        timeout: Duration
    ) async throws(CoordinationError) -> (endpoint: String, bytes: [UInt8]) {
        let endpoint = currentEndpoint
        let url = endpoint + path
        let status: UInt
        let bytes: [UInt8]
        do {
            let response = try await client.execute(try Self.request(url, body), timeout: Self.timeAmount(timeout))
            status = response.status.code
            bytes = Self.bytes(try await response.body.collect(upTo: Self.maximumAnswerBytes))
        } catch let error as CoordinationError {
            throw error
        } catch {
            throw failure(name, url, error)
        }
        guard status == 200 else { throw Self.httpError(name, url, status, bytes) }
        return (endpoint, bytes)
    }

    /// A call that got no answer: the next call goes to the next endpoint.
    private func failure(_ name: String, _ url: String, _ error: any Error) -> CoordinationError {
        if endpoints.count > 1 { preferred.add(1, ordering: .relaxed) }
        return CoordinationError(.unavailable, "\(name): no answer from \(url)", cause: error)
    }

    private static func request(_ url: String, _ body: some Encodable) throws(CoordinationError) -> HTTPClientRequest {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        do {
            request.body = .bytes(ByteBuffer(bytes: try JSONEncoder().encode(body)))
        } catch {
            throw CoordinationError(.invalidUse, "cannot encode the request to \(url)", cause: error)
        }
        return request
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

    private static func bytes(_ buffer: ByteBuffer) -> [UInt8] { Array(buffer.readableBytesView) }

    private static func timeAmount(_ duration: Duration) -> TimeAmount {
        let (seconds, attoseconds) = duration.components
        return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
