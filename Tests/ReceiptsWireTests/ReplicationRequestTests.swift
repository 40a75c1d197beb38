import ReceiptsWire
import Testing

/// A standby's requests on the replication wire (deploy/REPLICATION.md section 4.3).
struct ReplicationRequestTests {
    static let follow = ReplicationRequest.Follow(
        session: 0xDEAD_BEEF_0000_0001,
        member: "receiptd-b-3",
        workerIndex: 3,
        knownTerm: 7,
        terms: [
            TermStart(term: 1, start: 0, member: "receiptd-3"),
            TermStart(term: 7, start: UInt64.max - 1, member: "receiptd-b-3"),
        ],
        logEnd: UInt64.max,
        durable: 1 << 40,
        engineSettings: "retention-days=30\nmax-members=5000\n",
        windowBytes: 16 << 20
    )

    static let everyKind: [ReplicationRequest] = [
        .follow(follow),
        .follow(
            ReplicationRequest.Follow(
                session: 0,
                member: "",
                workerIndex: 0,
                knownTerm: 0,
                terms: [],
                logEnd: 0,
                durable: 0,
                engineSettings: "",
                windowBytes: 0
            )
        ),
        .ack(ReplicationRequest.Ack(session: 9, appended: 300, durable: 200, applied: 100)),
        .ack(ReplicationRequest.Ack(session: 0, appended: 0, durable: 0, applied: 0)),
    ]

    @Test(arguments: everyKind)
    func roundTripsEveryKind(request: ReplicationRequest) throws {
        let frames = request.encode()
        #expect(frames.count == 1)
        #expect(try ReplicationRequest.decode(frames) == request)
    }

    @Test func refusesBytesThatAreNotARequest() {
        #expect(throws: WireError.self) { try ReplicationRequest.decode([[0xFF, 0xFF, 0xFF]]) }
        let truncated = Array(ReplicationRequest.follow(Self.follow).encode()[0].dropLast(3))
        #expect(
            wireErrorCode {
                try ReplicationRequest.decode([truncated])
            } == .malformedFrame
        )
    }

    @Test func refusesARequestOfNoKnownKind() {
        let newer = ProtoWriter.build { $0.message(field: 9) { $0.varint(field: 1, 1) } }
        #expect(
            wireErrorCode {
                try ReplicationRequest.decode([newer])
            } == .unknownKind
        )
    }

    @Test(arguments: [0, 2, 3])
    func refusesAnyFrameCountButOne(count: Int) {
        let frame = ReplicationRequest.ack(ReplicationRequest.Ack(session: 1, appended: 2, durable: 2, applied: 1))
            .encode()[0]
        #expect(
            wireErrorCode {
                try ReplicationRequest.decode(Array(repeating: frame, count: count))
            } == .wrongFrameCount
        )
    }

    @Test func refusesABodyOverTheBound() {
        var follow = Self.follow
        follow.engineSettings = String(repeating: "x", count: ReplicationFrames.maxBodyBytes)
        #expect(
            wireErrorCode {
                try ReplicationRequest.decode(ReplicationRequest.follow(follow).encode())
            } == .frameTooLarge
        )
        follow.engineSettings = String(repeating: "x", count: ReplicationFrames.maxBodyBytes - 200)
        #expect(throws: Never.self) { try ReplicationRequest.decode(ReplicationRequest.follow(follow).encode()) }
    }

    /// A Follow with `bad` in the field `field` of its body (or of its first term).
    static func follow(withBadString bad: [UInt8], in field: String) -> [UInt8] {
        ProtoWriter.build { w in
            w.message(field: 1) { f in
                f.varint(field: 1, 5)
                f.bytes(field: 2, field == "member" ? bad : Array("receiptd-3".utf8))
                f.message(field: 5) { t in
                    t.varint(field: 1, 1)
                    t.bytes(field: 3, field == "terms.member" ? bad : Array("receiptd-3".utf8))
                }
                f.bytes(field: 8, field == "engine_settings" ? bad : [])
            }
        }
    }

    @Test(arguments: ["member", "terms.member", "engine_settings"])
    func refusesStringsThatAreNotUTF8OrHoldANUL(field: String) throws {
        #expect(throws: WireError(code: .invalidField, message: "Follow: \(field) is not valid UTF-8")) {
            try ReplicationRequest.decode([Self.follow(withBadString: [0x72, 0xFF, 0x33], in: field)])
        }
        #expect(throws: WireError(code: .invalidField, message: "Follow: \(field) holds a NUL byte")) {
            try ReplicationRequest.decode([Self.follow(withBadString: Array("r\0b".utf8), in: field)])
        }
        let decoded = try ReplicationRequest.decode([Self.follow(withBadString: Array("é-3".utf8), in: field)])
        guard case .follow(let follow) = decoded else {
            Issue.record("decoded \(decoded)")
            return
        }
        let strings = [follow.member, follow.terms.first?.member, follow.engineSettings]
        #expect(strings.contains("é-3"))
    }
}
