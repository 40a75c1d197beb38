import Foundation
import Testing
import ZeroMQ

struct CurveTests {
    /// The fingerprint is the first 8 bytes of the key's SHA-256 (known answers from Python's
    /// hashlib), so that logs name a key the same way whichever library computes it.
    @Test(arguments: [
        ([UInt8](repeating: 0, count: 32), "sha256:66687aadf862bd77"),
        ((0..<32).map(UInt8.init), "sha256:630dcd2966c43366"),
    ])
    func fingerprintIsTheStartOfTheKeysSHA256(bytes: [UInt8], expected: String) throws {
        #expect(try CurveKey(bytes: bytes).fingerprint == expected)
    }

    @Test("a key pair from libzmq round-trips through Z85, and the secret key gives its public key")
    func keyPair() throws {
        let pair = try CurveKey.makePair()
        #expect(pair.publicKey.bytes.count == 32)
        #expect(try CurveKey(z85: pair.publicKey.z85) == pair.publicKey)
        #expect(try pair.secretKey.publicKey() == pair.publicKey)
        #expect(pair.publicKey != pair.secretKey)
        #expect(!"\(pair.secretKey)".contains(pair.secretKey.z85), "a key's description printed it")
    }

    @Test("key files: comments, blank lines and names are skipped; a bad line is named, not shown")
    func keyFileText() throws {
        let first = try CurveKey.makePair().publicKey
        let second = try CurveKey.makePair().publicKey
        let text = "# gateways\n\n  \(first.z85) gateway-1\n\(second.z85)\n"
        #expect(try CurveKey.keys(in: text) == [first, second])
        let secret = try CurveKey.makePair().secretKey.z85
        let error = #expect(throws: ZMQError.self) { try CurveKey.keys(in: "\(first.z85)\n\(secret.dropLast())\n") }
        #expect(error?.message.contains("line 2") == true)
        #expect(error?.message.contains(secret.dropLast()) == false)
        #expect(throws: ZMQError.self) { try CurveKey(z85: String(repeating: "~", count: 40)) }
        #expect(throws: ZMQError.self) { try CurveKey(bytes: [1, 2, 3]) }
    }

    @Test("a key file must hold exactly one key")
    func singleKeyFile() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/one.key"
        let key = try CurveKey.makePair().secretKey
        try Data("# secret\n\(key.z85)\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(try CurveKey.read(file: path) == key)
        try Data("\(key.z85)\n\(key.z85)\n".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: ZMQError.self) { try CurveKey.read(file: path) }
        #expect(throws: ZMQError.self) { try CurveKey.read(file: directory.path + "/missing.key") }
    }

    @Test(
        "a CURVE client with the server's key talks to a CURVE server; one with another server key fails its handshake"
    )
    func handshake() throws {
        let context = try ZMQContext()
        let server = try CurveKey.makePair()
        let client = try CurveKey.makePair()
        let router = try ZMQSocket(context: context, type: .router)
        try router.setCurveServer(secretKey: server.secretKey, zapDomain: "test")
        #expect(try router.mechanism == .curve)
        try router.monitor("inproc://curve-test-monitor", events: .handshakeFailures)
        let monitor = try ZMQSocket(context: context, type: .pair)
        try monitor.setReceiveTimeout(milliseconds: testReceiveTimeout)
        try monitor.connect("inproc://curve-test-monitor")
        try router.bind("tcp://127.0.0.1:*")
        let endpoint = try router.lastEndpoint
        try router.setReceiveTimeout(milliseconds: testReceiveTimeout)

        let good = try ZMQSocket(context: context, type: .dealer)
        try good.setCurveClient(
            CurveClientKeys(serverPublicKey: server.publicKey, publicKey: client.publicKey, secretKey: client.secretKey)
        )
        try good.connect(endpoint)
        _ = try good.send([bytes("hello")])
        #expect(try router.receiveMultipart()?.last == bytes("hello"))

        let wrong = try ZMQSocket(context: context, type: .dealer)
        try wrong.setCurveClient(
            CurveClientKeys(
                serverPublicKey: try CurveKey.makePair().publicKey,
                publicKey: client.publicKey,
                secretKey: client.secretKey
            )
        )
        try wrong.connect(endpoint)
        _ = try wrong.send([bytes("intruder")])
        let event = try monitor.receiveMultipart().flatMap(MonitorEvent.init(frames:))
        #expect(event?.event == .handshakeFailedProtocol)
        #expect(event?.value == MonitorEvent.cryptographicError)
        for socket in [good, wrong, router, monitor] { socket.close() }
    }
}
