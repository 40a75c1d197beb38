import Foundation
import ReceiptsReplication
import ReceiptsTestKit
import ReceiptsTestTraits
import Synchronization
import Testing

@testable import ReceiptsCoordination

/// The gateway's HTTP/1.1 against a peer that answers as scripted (`ScriptedPeer`): what it
/// sends, and that a peer that never answers, answers too much, cuts its answer, refuses, or is
/// shut down on, fails the call with a code instead of hanging it.
@Suite(.ownThread) struct EtcdGatewayTransportTests {
    struct Body: Encodable {
        var key = "a2V5"
    }

    static func gateway(_ endpoints: String...) throws -> EtcdGateway {
        try EtcdGateway(endpoints: endpoints, connectTimeout: .seconds(1))
    }

    /// A range call, as a coordinator makes one.
    static func range(
        _ gateway: EtcdGateway,
        timeout: Duration = .seconds(5)
    ) async throws -> EtcdMessages.HeaderResponse {
        try await gateway.call("range", "/v3/kv/range", Body(), timeout: timeout)
    }

    @Test(
        arguments: [
            ("http://127.0.0.1:2379", "127.0.0.1", 2379),
            ("http://127.0.0.1:2379/", "127.0.0.1", 2379),
            ("http://etcd-0.etcd:2379", "etcd-0.etcd", 2379),
            ("http://[::1]:2379", "::1", 2379),
        ]
    )
    func anEndpointIsHTTPHostAndPort(text: String, host: String, port: Int) throws {
        let endpoint = try GatewayEndpoint(text)
        #expect(endpoint.host == host && endpoint.port == port)
    }

    @Test(
        arguments: [
            "https://127.0.0.1:2379", "127.0.0.1:2379", "http://127.0.0.1", "http://127.0.0.1:0",
            "http://127.0.0.1:65536", "http://:2379", "http://127.0.0.1:2379/v3", "http://a:b:2379",
        ]
    )
    func anythingElseIsRefusedAtOnce(text: String) {
        let error = #expect(throws: CoordinationError.self) { try GatewayEndpoint(text) }
        #expect(error?.code == .invalidUse)
        #expect(error?.message.contains(text) == true)
    }

    @Test func aCallIsOnePostOfItsJSONAndItsAnswerIsDecoded() async throws {
        let peer = try ScriptedPeer([.reply(ScriptedPeer.answer(status: "200 OK", #"{"header":{"revision":"42"}}"#))])
        defer { peer.close() }
        let answer = try await Self.range(Self.gateway(peer.endpoint))
        #expect(answer.header?.revision == 42)
        let request = try #require(peer.requests.first)
        let lines = request.head.split(separator: "\r\n").map(String.init)
        #expect(lines.first == "POST /v3/kv/range HTTP/1.1")
        #expect(lines.contains("Host: 127.0.0.1:\(peer.port)"))
        #expect(lines.contains("Content-Type: application/json"))
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"key":"a2V5"}"#)
    }

    @Test func aPeerThatNeverAnswersFailsTheCallAtItsTimeoutAndLosesTheConnection() async throws {
        let peer = try ScriptedPeer([.replyAndHold([])])
        defer { peer.close() }
        let started = ContinuousClock.now
        let error = await #expect(throws: CoordinationError.self) {
            _ = try await Self.range(Self.gateway(peer.endpoint), timeout: .milliseconds(300))
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("no answer from \(peer.endpoint)/v3/kv/range") == true)
        #expect(ContinuousClock.now - started < .seconds(10), "bounded by the timeout, not by the peer")
        try await Self.eventually { peer.connectionsClosedByClient == 1 }
    }

    @Test func anHTTPErrorCarriesEtcdsCode() async throws {
        let body =
            #"{"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5}"#
        let peer = try ScriptedPeer([.reply(ScriptedPeer.answer(status: "404 Not Found", body))])
        defer { peer.close() }
        let error = await #expect(throws: CoordinationError.self) {
            let _: EtcdMessages.HeaderResponse = try await Self.gateway(peer.endpoint)
                .call("lease revoke", "/v3/lease/revoke", Body(), timeout: .seconds(5))
        }
        #expect(error?.code == .leaseNotFound)
        #expect(error?.message.contains("HTTP 404") == true)
    }

    @Test func anAnswerCutShortIsUnavailableAndOnePastTheLimitIsMalformed() async throws {
        let cut = Array("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"header\":".utf8)
        let huge =
            Array("HTTP/1.1 200 OK\r\nContent-Length: 5000000\r\n\r\n".utf8) + [UInt8](repeating: 32, count: 5_000_000)
        let peer = try ScriptedPeer([.reply(cut), .reply(huge), .reply(Array("garbage\r\n\r\n".utf8))])
        defer { peer.close() }
        let gateway = try Self.gateway(peer.endpoint)
        for expected: CoordinationError.Code in [.unavailable, .malformed, .unavailable] {
            let error = await #expect(throws: CoordinationError.self) {
                _ = try await Self.range(gateway)
            }
            #expect(error?.code == expected, "\(error.map(String.init(describing:)) ?? "")")
        }
    }

    /// A refused connection moves calls to the next endpoint; a call is never retried itself.
    @Test func aRefusedConnectionIsUnavailableAndTheNextCallGoesToTheNextEndpoint() async throws {
        let closed = try ScriptedPeer([], listens: false)
        defer { closed.close() }
        let peer = try ScriptedPeer([.reply(ScriptedPeer.answer(status: "200 OK", #"{"header":{"revision":"7"}}"#))])
        defer { peer.close() }
        let gateway = try Self.gateway(closed.endpoint, peer.endpoint)
        let error = await #expect(throws: CoordinationError.self) {
            _ = try await Self.range(gateway)
        }
        #expect(error?.code == .unavailable)
        #expect(peer.requests.isEmpty, "not retried")
        let answer = try await Self.range(gateway)
        #expect(answer.header?.revision == 7)
    }

    /// An etcd member cut off from its cluster answers 503 "no leader" to everything: the next
    /// call goes to the next endpoint. A refusal of the call itself (4xx) keeps the endpoint.
    @Test func aServerErrorMovesTheNextCallToTheNextEndpointAndARefusalDoesNot() async throws {
        let noLeader = ScriptedPeer.answer(
            status: "503 Service Unavailable",
            #"{"error":"etcdserver: no leader","message":"etcdserver: no leader","code":14}"#
        )
        let refused = ScriptedPeer.answer(status: "400 Bad Request", #"{"error":"bad","code":3}"#)
        let isolated = try ScriptedPeer([.reply(refused), .reply(noLeader)])
        defer { isolated.close() }
        let healthy = try ScriptedPeer([.reply(ScriptedPeer.answer(status: "200 OK", #"{"header":{"revision":"9"}}"#))])
        defer { healthy.close() }
        let gateway = try Self.gateway(isolated.endpoint, healthy.endpoint)
        for _ in 0..<2 { await #expect(throws: CoordinationError.self) { _ = try await Self.range(gateway) } }
        #expect(isolated.requests.count == 2, "the 400 kept the endpoint")
        #expect(try await Self.range(gateway).header?.revision == 9)
    }

    /// A watch's messages come out whole whatever the chunks, and a shutdown ends the open stream
    /// (and fails every later call).
    @Test func aStreamIsCutIntoItsMessagesAndAShutdownEndsIt() async throws {
        let first = #"{"result":{"header":{"revision":"1"}}}"#
        let second = #"{"result":{"header":{"revision":"2"}}}"#
        let both = first + "\n" + second + "\n"
        let split = both.index(both.startIndex, offsetBy: first.count - 5)
        let peer = try ScriptedPeer([
            .replyAndHold(
                ScriptedPeer.chunkedHead + ScriptedPeer.chunk(String(both[..<split]))
                    + ScriptedPeer.chunk(String(both[split...]))
            )
        ])
        defer { peer.close() }
        let gateway = try Self.gateway(peer.endpoint)
        let revisions = Mutex<[Int64]>([])
        let watch = Task(executorPreference: BlockingWait.ownExecutor(label: "watch")) {
            try await gateway.stream("watch", "/v3/watch", Body()) {
                (answer: EtcdMessages.HeaderResponse) async throws(CoordinationError) in
                revisions.withLock { $0.append(answer.header?.revision ?? 0) }
            }
        }
        try await Self.eventually { revisions.withLock { $0 } == [1, 2] }
        await gateway.shutdown()
        await #expect(throws: CoordinationError.self) { try await watch.value }
        try await Self.eventually { peer.connectionsClosedByClient == 1 }
        let error = await #expect(throws: CoordinationError.self) {
            _ = try await Self.range(gateway)
        }
        #expect(error?.code == .invalidUse)
    }

    /// A cancelled watch closes its connection.
    @Test func aCancelledStreamClosesItsConnection() async throws {
        let peer = try ScriptedPeer([.replyAndHold(ScriptedPeer.chunkedHead)])
        defer { peer.close() }
        let gateway = try Self.gateway(peer.endpoint)
        let watch = Task(executorPreference: BlockingWait.ownExecutor(label: "watch")) {
            try await gateway.stream("watch", "/v3/watch", Body()) {
                (_: EtcdMessages.HeaderResponse) async throws(CoordinationError) in
            }
        }
        try await Self.eventually { peer.requests.count == 1 }
        watch.cancel()
        await #expect(throws: (any Error).self) { try await watch.value }
        try await Self.eventually { peer.connectionsClosedByClient == 1 }
    }

    /// Waits up to 10 s for `condition`.
    static func eventually(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("not within 10 s")
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
