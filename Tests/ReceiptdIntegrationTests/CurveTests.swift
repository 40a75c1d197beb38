import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

private let accepted = EventOutcome.accepted(held: false)

/// Key files for a CURVE-enabled receiptd: the server's pair, allowlists per role, and clients.
private struct KeyRing {
    let directory: String
    let server: (publicKey: CurveKey, secretKey: CurveKey)
    /// Listed as gateway and operator: the test harness's own client sends and reads stats.
    let admin: (publicKey: CurveKey, secretKey: CurveKey)
    let gateway: (publicKey: CurveKey, secretKey: CurveKey)
    let reader: (publicKey: CurveKey, secretKey: CurveKey)
    let stranger: (publicKey: CurveKey, secretKey: CurveKey)

    init() throws {
        directory = try TemporaryDirectory.make(prefix: "rdkeys")
        server = try CurveKey.makePair()
        admin = try CurveKey.makePair()
        gateway = try CurveKey.makePair()
        reader = try CurveKey.makePair()
        stranger = try CurveKey.makePair()
        try Data("# the server's secret key\n\(server.secretKey.z85)\n".utf8).write(to: url("server.key"))
        try writeList("gateways", [admin.publicKey, gateway.publicKey])
        try writeList("readers", [reader.publicKey])
        try writeList("operators", [admin.publicKey])
    }

    func url(_ name: String) -> URL { URL(fileURLWithPath: "\(directory)/\(name)") }

    /// Rewrites one role's list (the file SIGHUP re-reads).
    func writeList(_ role: String, _ keys: [CurveKey]) throws {
        let text = "# \(role)\n" + keys.enumerated().map { "\($0.element.z85) client-\($0.offset)\n" }.joined()
        try Data(text.utf8).write(to: url(role), options: .atomic)
    }

    var arguments: [String] {
        [
            "--curve-secret-key-file", url("server.key").path, "--curve-gateway-keys", url("gateways").path,
            "--curve-reader-keys", url("readers").path, "--curve-operator-keys", url("operators").path,
        ]
    }

    /// A client of this server with `pair` as its own keys.
    func client(_ pair: (publicKey: CurveKey, secretKey: CurveKey)) -> CurveClientKeys {
        CurveClientKeys(serverPublicKey: server.publicKey, publicKey: pair.publicKey, secretKey: pair.secretKey)
    }
}

/// CurveZMQ and the ZAP allowlist against a real receiptd: who gets in on which endpoint,
/// what refusals are counted, and SIGHUP reloading the lists.
@Suite(.serialized, .startsProcesses)
struct CurveTests {
    /// Sends a frame on a raw DEALER and reports whether any reply came within `milliseconds`.
    private static func answers(
        _ endpoint: String,
        keys: CurveClientKeys?,
        _ frame: [UInt8],
        milliseconds: Int32 = 700
    ) throws -> Bool {
        let socket = try ZMQSocket(context: ReceiptdProcess.sharedContext, type: .dealer)
        defer { socket.close() }
        if let keys { try socket.setCurveClient(keys) }
        try socket.setReceiveTimeout(milliseconds: milliseconds)
        try socket.connect(endpoint)
        _ = try socket.send([[], frame])
        return try socket.receiveMultipart() != nil
    }

    private static func events(_ conversation: String, source: String) -> [Event] {
        var factory = EventFactory(source: source)
        return [
            factory.make(.conversationUpserted(conversation: conversation, kind: .group, members: ["a", "b"])),
            factory.make(.messageSent(conversation: conversation, message: "m1", sender: "a", isSystem: false)),
            factory.make(.read(conversation: conversation, user: "b", message: "m1")),
        ]
    }

    @Test func allowedKeysWorkEndToEndByRole() async throws {
        let keys = try KeyRing()
        let daemon = try await ReceiptdProcess(arguments: keys.arguments, curve: keys.client(keys.admin))
        let gateway = try daemon.makeClient(curve: keys.client(keys.gateway))
        let reader = try daemon.makeClient(curve: keys.client(keys.reader))
        defer {
            Task.onOwnThread {
                await gateway.shutdown()
                await reader.shutdown()
            }
        }

        let updates = reader.subscribe(to: .conversation("curve-c1"))
        let outcomes = try await gateway.send(identified: Self.events("curve-c1", source: "gw-curve"))
        #expect(outcomes == [accepted, accepted, accepted])
        let readByAll = try await within(10, "the reader's update over CURVE") { () -> StatusUpdate? in
            for await update in updates where update.status.status == .readByAll { return update }
            return nil
        }
        #expect(readByAll?.status.message == "m1")
        let viewed = try await reader.status(of: "m1", in: "curve-c1", viewer: Viewer(user: "a"))
        #expect(viewed.status.status == .readByAll)

        // Compact and stats are for operators; a reader gets a clear refusal, counted.
        await #expect(throws: ReceiptsClientError.self) { _ = try await reader.stats(worker: 0) }
        do {
            _ = try await reader.compact(worker: 0)
            Issue.record("a reader compacted")
        } catch {
            #expect(error.code == .permissionDenied)
        }
        _ = try await daemon.client.compact(worker: 0)
        #expect(try await daemon.counter("receiptd.auth.denied", label: "stats") == 1)
        #expect(try await daemon.counter("receiptd.auth.denied", label: "compact") == 1)
        for endpoint in ["ingest", "ingest_sub", "publish", "query"] {
            #expect(try await daemon.counter("receiptd.auth.refused", label: endpoint) == 0)
        }
    }

    @Test func refusedClientsAreCountedWhileAnAllowedGatewayGoesOn() async throws {
        let keys = try KeyRing()
        let daemon = try await ReceiptdProcess(arguments: keys.arguments, curve: keys.client(keys.admin))
        let gateway = try daemon.makeClient(curve: keys.client(keys.gateway))
        defer { Task.onOwnThread { await gateway.shutdown() } }
        // An allowed gateway streams throughout.
        let stream = Task.onOwnThread {
            var factory = EventFactory(source: "gw-stream")
            var acceptedCount = 0
            for index in 0..<40 {
                let conversation = "curve-stream-\(index)"
                let outcomes = try await gateway.send(identified: [
                    factory.make(.conversationUpserted(conversation: conversation, kind: .group, members: ["a", "b"])),
                    factory.make(.messageSent(conversation: conversation, message: "m", sender: "a", isSystem: false)),
                ])
                acceptedCount += outcomes.filter { $0 == accepted }.count
                try await Task.sleep(for: .milliseconds(20))
            }
            return acceptedCount
        }

        let frame = EventBatchCodec.encode(Self.events("curve-hostile", source: "hostile"))
        let wrongServer = CurveClientKeys(
            serverPublicKey: try CurveKey.makePair().publicKey,
            publicKey: keys.gateway.publicKey,
            secretKey: keys.gateway.secretKey
        )
        let refused: [(String, CurveClientKeys?, String, String)] = [
            ("an unlisted key with the right server key", keys.client(keys.stranger), "auth.refused", "ingest"),
            ("a reader's key on ingest", keys.client(keys.reader), "auth.refused", "ingest"),
            ("a plaintext client", nil, "auth.handshake_failures", "ingest"),
            ("a listed key with the wrong server key", wrongServer, "auth.handshake_failures", "ingest"),
        ]
        for (what, clientKeys, counter, endpoint) in refused {
            let before = try await daemon.counter("receiptd.\(counter)", label: endpoint)
            #expect(try !Self.answers(daemon.ingestEndpoint, keys: clientKeys, frame), "\(what) was answered")
            try await daemon.waitForCounter("receiptd.\(counter)", label: endpoint, toReach: before + 1)
        }
        // A gateway's key does not open the query endpoint.
        let query = Query.health.encode()
        let queriesRefused = try await daemon.counter("receiptd.auth.refused", label: "query")
        #expect(try !Self.answers(daemon.queryEndpoint, keys: keys.client(keys.gateway), query))
        try await daemon.waitForCounter("receiptd.auth.refused", label: "query", toReach: queriesRefused + 1)
        #expect(try Self.answers(daemon.queryEndpoint, keys: keys.client(keys.reader), query))

        // Every endpoint, the PUB and the fire-and-forget SUB included, refuses a plaintext peer
        // and an unlisted key, each counted under that endpoint.
        let endpoints: [(String, String, SocketType)] = [
            ("ingest", daemon.ingestEndpoint, .dealer), ("ingest_sub", daemon.ingestSubscribeEndpoint, .pub),
            ("publish", daemon.publishEndpoint, .sub), ("query", daemon.queryEndpoint, .dealer),
        ]
        for (label, endpoint, type) in endpoints {
            for (clientKeys, counter) in [
                (nil, "auth.handshake_failures"), (keys.client(keys.stranger), "auth.refused"),
            ] {
                let before = try await daemon.counter("receiptd.\(counter)", label: label)
                let peer = try ZMQSocket(context: ReceiptdProcess.sharedContext, type: type)
                defer { peer.close() }
                if let clientKeys { try peer.setCurveClient(clientKeys) }
                if type == .sub { try peer.subscribe("") }
                try peer.connect(endpoint)
                try await daemon.waitForCounter("receiptd.\(counter)", label: label, toReach: before + 1)
            }
        }

        #expect(try await stream.value == 80)
        #expect(try await daemon.counter("receiptd.events.accepted") == 80)
        let hostile = try? await daemon.client.status(of: "m1", in: "curve-hostile", viewer: Viewer(user: "a"))
        #expect(hostile == nil, "a refused client's events were applied")
    }

    @Test func sighupAddsAndRemovesKeysWithoutDroppingConnections() async throws {
        let keys = try KeyRing()
        let daemon = try await ReceiptdProcess(arguments: keys.arguments, curve: keys.client(keys.admin))
        let connected = try daemon.makeClient(curve: keys.client(keys.gateway))
        defer { Task.onOwnThread { await connected.shutdown() } }
        var factory = EventFactory(source: "gw-sighup")
        func conversation(_ name: String) -> [Event] {
            [
                factory.make(.conversationUpserted(conversation: name, kind: .group, members: ["a", "b"])),
                factory.make(.messageSent(conversation: name, message: "m1", sender: "a", isSystem: false)),
            ]
        }
        #expect(try await connected.send(identified: conversation("hup-1")) == [accepted, accepted])
        let newcomerFrame = EventBatchCodec.encode(conversation("hup-2"))
        #expect(try !Self.answers(daemon.ingestEndpoint, keys: keys.client(keys.stranger), newcomerFrame))
        try await daemon.waitForCounter("receiptd.auth.refused", label: "ingest", toReach: 1)

        // Swap the lists: the newcomer in, the connected gateway out.
        try keys.writeList("gateways", [keys.admin.publicKey, keys.stranger.publicKey])
        daemon.signal(SIGHUP)
        try await daemon.waitForCounter("receiptd.auth.reloads", toReach: 1)
        #expect(try Self.answers(daemon.ingestEndpoint, keys: keys.client(keys.stranger), newcomerFrame))
        // The removed gateway's connection stays: ZAP is asked only at the handshake.
        #expect(try await connected.send(identified: conversation("hup-3")) == [accepted, accepted])
        // A new connection with the removed key is refused.
        let refusedBefore = try await daemon.counter("receiptd.auth.refused", label: "ingest")
        let removedFrame = EventBatchCodec.encode(conversation("hup-4"))
        #expect(try !Self.answers(daemon.ingestEndpoint, keys: keys.client(keys.gateway), removedFrame))
        try await daemon.waitForCounter("receiptd.auth.refused", label: "ingest", toReach: refusedBefore + 1)

        // A list that does not parse is not applied: the previous lists stay in force.
        try Data("not a key\n".utf8).write(to: keys.url("gateways"), options: .atomic)
        daemon.signal(SIGHUP)
        try await daemon.waitForCounter("receiptd.auth.reloads.failed", toReach: 1)
        let stillIn = try daemon.makeClient(curve: keys.client(keys.stranger))
        defer { Task.onOwnThread { await stillIn.shutdown() } }
        #expect(try await stillIn.send(identified: conversation("hup-5")) == [accepted, accepted])
        for message in ["hup-1", "hup-2", "hup-3", "hup-5"] {
            #expect(
                try await daemon.client.status(of: "m1", in: message, viewer: Viewer(user: "a")).status.sender == "a"
            )
        }
        #expect(!daemon.standardError().contains(keys.stranger.publicKey.z85), "a client key was logged")
        #expect(daemon.standardError().contains(#""key":"sha256:"#), "a refused key was not logged by fingerprint")
    }

    @Test func theCGatewayExampleTalksCurveWithKeyFiles() async throws {
        let keys = try KeyRing()
        // The example also subscribes: its key is a gateway's and a reader's.
        try keys.writeList("readers", [keys.reader.publicKey, keys.gateway.publicKey])
        try Data("\(keys.server.publicKey.z85) server\n".utf8).write(to: keys.url("server.pub"))
        try Data("\(keys.gateway.secretKey.z85)\n".utf8).write(to: keys.url("gateway.key"))
        let daemon = try await ReceiptdProcess(arguments: keys.arguments, curve: keys.client(keys.admin))
        func runExample(_ extra: [String]) async throws -> (status: Int32, output: String) {
            let process = Process()
            process.executableURL = ReceiptdLauncher.binaryDirectory.appendingPathComponent("gateway-example")
            process.arguments =
                ["--ingest", daemon.ingestEndpoint, "--publish", daemon.publishEndpoint, "--timeout-ms", "3000"] + extra
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            try process.runInTurn()
            guard await process.exited(within: 15) else {
                process.terminate()
                throw IntegrationError("gateway-example did not exit")
            }
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return (process.terminationStatus, text)
        }
        let curve = try await runExample([
            "--curve-server-key", keys.url("server.pub").path, "--curve-client-key", keys.url("gateway.key").path,
        ])
        #expect(curve.status == 0, "\(curve.output)")
        #expect(curve.output.contains("saw READ for m1"))
        let plaintext = try await runExample([])
        #expect(plaintext.status == 1, "a plaintext C gateway got in: \(plaintext.output)")
        #expect(try await daemon.counter("receiptd.auth.handshake_failures", label: "ingest") >= 1)
    }

    /// Two members of a replicated ordinal with CURVE on: the standby follows the primary over
    /// the replication endpoint with the workers' own key pair (acknowledgements under
    /// `--replication-ack standby` need it), a stranger's key is refused there and counted, and
    /// the standby binds no plaintext client endpoint.
    @Test func replicationRunsOverCurveAndAdmitsOnlyTheWorkersKey() async throws {
        let keys = try KeyRing()
        defer { try? FileManager.default.removeItem(atPath: keys.directory) }
        let etcd = try await EtcdProcess()
        let alpha = try await ReceiptdProcess(
            arguments: FailoverTests.arguments("alpha-0", etcd: etcd, extra: ["--replication-fallback", "stall"])
                + keys.arguments,
            curve: keys.client(keys.admin)
        )
        let beta = try await ReceiptdProcess(
            arguments: FailoverTests.arguments("beta-0", etcd: etcd, extra: ["--replication-fallback", "stall"])
                + keys.arguments,
            curve: keys.client(keys.admin),
            awaitsHealth: false
        )
        // Acknowledged under stall with the standby as the only possible member of the set.
        let outcomes = try await alpha.ingest(Self.events("c-curve", source: "gw-curve"))
        #expect(outcomes.allSatisfy { $0 == accepted })
        #expect(try await alpha.counter("receiptd.replication.refused_frames") == 0)

        // A stranger's key gets no session on the replication endpoint.
        let stranger = try ZMQSocket(context: ReceiptdProcess.sharedContext, type: .dealer)
        defer { stranger.close() }
        try stranger.setCurveClient(keys.client(keys.stranger))
        try stranger.connect("ipc://\(alpha.dataDirectory)/replication.sock")
        let follow = ReplicationRequest.follow(
            ReplicationRequest.Follow(
                session: 1,
                member: "mallory-0",
                workerIndex: 0,
                knownTerm: 0,
                terms: [TermStart(term: 0, start: 0, member: "")],
                logEnd: 0,
                durable: 0,
                engineSettings: "",
                windowBytes: 1 << 20
            )
        )
        _ = try stranger.send(follow.encode(), dontWait: true)
        try stranger.setReceiveTimeout(milliseconds: 1000)
        #expect(try stranger.receiveMultipart() == nil, "the replication endpoint answered a stranger")
        try await alpha.waitForCounter("receiptd.auth.refused", label: "replication", toReach: 1)
        // The standby's client endpoints are not bound in plaintext.
        #expect(!FileManager.default.fileExists(atPath: "\(beta.dataDirectory)/query.sock"))
        #expect(beta.isRunning)
    }

    @Test func startRefusesABadKeyFileNamingItButNotItsContent() async throws {
        let keys = try KeyRing()
        try Data("\(keys.server.secretKey.z85)x\n".utf8).write(to: keys.url("server.key"))
        let error = await #expect(throws: IntegrationError.self) {
            _ = try await ReceiptdProcess(arguments: keys.arguments, curve: keys.client(keys.admin))
        }
        let message = error.map { "\($0)" } ?? ""
        #expect(message.contains("server.key"))
        #expect(!message.contains(keys.server.secretKey.z85))
    }
}
