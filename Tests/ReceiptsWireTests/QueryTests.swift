import ReceiptsCore
import ReceiptsWire
import Testing

struct QueryTests {
    static let everyKind: [Query] = [
        .messageStatus(
            conversation: "c",
            message: "m",
            viewer: Viewer(user: "alice", timeZone: "Europe/Paris", locale: "fr_FR", prefersCounts: true)
        ),
        .messageStatus(conversation: "c", message: "m", viewer: Viewer(user: "")),
        .readDetail(conversation: "c", message: "m"),
        .lastSent(conversation: "c", viewer: Viewer(user: "bob")),
        .unreadCounts(user: "bob", conversations: ["c1", "c2"]),
        .unreadCounts(user: "bob", conversations: []),
        .snapshot(conversation: "c", limit: 0),
        .snapshot(conversation: "c", limit: 50),
        .health,
        .stats,
        .compact,
    ]

    @Test(arguments: everyKind)
    func roundTripsEveryKind(query: Query) throws {
        #expect(try Query.decode(query.encode()) == query)
    }

    @Test func roundTripsRandomQueries() throws {
        var random = SeededGenerator(seed: 30)
        for _ in 0..<1_000 {
            let query = random.query()
            #expect(try Query.decode(query.encode()) == query)
        }
    }

    @Test func snapshotLimitIsClampedIntoUInt32() throws {
        #expect(
            try Query.decode(Query.snapshot(conversation: "c", limit: -5).encode())
                == .snapshot(conversation: "c", limit: 0)
        )
        #expect(
            try Query.decode(Query.snapshot(conversation: "c", limit: .max).encode())
                == .snapshot(conversation: "c", limit: Int(UInt32.max))
        )
    }

    @Test func queryWithNoKindIsUnknownKind() {
        let noKind = WireError(code: .unknownKind, message: "Query has no kind this build knows")
        #expect(throws: noKind) { try Query.decode([]) }
        // A kind from a newer client (field 15) is skipped by protobuf-c: still no known kind.
        let newer = ProtoWriter.build { $0.message(field: 15) { $0.string(field: 1, "x") } }
        #expect(throws: noKind) { try Query.decode(newer) }
    }

    @Test func absentViewerIsTheAnonymousViewer() throws {
        let frame = ProtoWriter.build { query in
            query.message(field: 1) { status in
                status.string(field: 1, "c")
                status.string(field: 2, "m")
            }
        }
        #expect(try Query.decode(frame) == .messageStatus(conversation: "c", message: "m", viewer: Viewer(user: "")))
    }

    @Test func malformedQueryIsMalformedFrame() {
        #expect(throws: WireError(code: .malformedFrame, message: "not a valid Query body (2 bytes)")) {
            try Query.decode([0x0A, 0x09])
        }
    }

    @Test func hostileFramesNeverCrash() {
        var random = SeededGenerator(seed: 31)
        for query in Self.everyKind {
            let valid = query.encode()
            for length in 0..<valid.count {
                _ = try? Query.decode(Array(valid[..<length]))
            }
        }
        for _ in 0..<5_000 {
            let frame = (0..<Int.random(in: 0...48, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? Query.decode(frame)
        }
    }
}
