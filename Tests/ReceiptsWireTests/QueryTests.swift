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
        // A kind from a newer client (field 99) is skipped by protobuf-c: still no known kind.
        let newer = ProtoWriter.build { $0.message(field: 99) { $0.string(field: 1, "x") } }
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

    /// Bytes that are not UTF-8, as a protobuf-c client can send in any string field.
    static let notUTF8: [UInt8] = [0x63, 0x2D, 0xFF]

    /// Every string field of every query kind, built with the given bytes, and the field's
    /// protobuf name that a refusal must give.
    static let stringFields: [(field: String, frame: @Sendable ([UInt8]) -> [UInt8])] = [
        ("conversation_id", { bytes in ProtoWriter.build { $0.message(field: 1) { $0.bytes(field: 1, bytes) } } }),
        ("message_id", { bytes in ProtoWriter.build { $0.message(field: 1) { $0.bytes(field: 2, bytes) } } }),
        (
            "viewer.user_id",
            { bytes in
                ProtoWriter.build { $0.message(field: 1) { $0.message(field: 3) { $0.bytes(field: 1, bytes) } } }
            }
        ),
        (
            "viewer.time_zone",
            { bytes in
                ProtoWriter.build { $0.message(field: 1) { $0.message(field: 3) { $0.bytes(field: 2, bytes) } } }
            }
        ),
        (
            "viewer.locale",
            { bytes in
                ProtoWriter.build { $0.message(field: 1) { $0.message(field: 3) { $0.bytes(field: 3, bytes) } } }
            }
        ),
        ("message_id", { bytes in ProtoWriter.build { $0.message(field: 2) { $0.bytes(field: 2, bytes) } } }),
        (
            "viewer.user_id",
            { bytes in
                ProtoWriter.build { $0.message(field: 3) { $0.message(field: 2) { $0.bytes(field: 1, bytes) } } }
            }
        ),
        ("user_id", { bytes in ProtoWriter.build { $0.message(field: 4) { $0.bytes(field: 1, bytes) } } }),
        (
            "conversation_ids[1]",
            { bytes in
                ProtoWriter.build { query in
                    query.message(field: 4) { counts in
                        counts.string(field: 2, "c")
                        counts.bytes(field: 2, bytes)
                    }
                }
            }
        ),
        ("conversation_id", { bytes in ProtoWriter.build { $0.message(field: 5) { $0.bytes(field: 1, bytes) } } }),
        (
            "conversation_ids[0]",
            { bytes in ProtoWriter.build { $0.message(field: 13) { $0.bytes(field: 3, bytes) } } }
        ),
    ]

    /// A query whose strings are not UTF-8 is refused naming the field, never answered for a
    /// repaired id (which could be another conversation's).
    @Test(arguments: stringFields.indices)
    func invalidUTF8IsRefusedNamingTheField(stringField: Int) {
        let (field, frame) = Self.stringFields[stringField]
        #expect(throws: WireError(code: .invalidField, message: "query: \(field) is not valid UTF-8")) {
            try Query.decode(frame(Self.notUTF8))
        }
    }

    /// A query whose string holds a NUL byte is refused naming the field, never answered for the
    /// id cut at the NUL (which could be another conversation's: "c-\0b" would be "c-").
    @Test(arguments: stringFields.indices)
    func nulIsRefusedNamingTheField(stringField: Int) {
        let (field, frame) = Self.stringFields[stringField]
        for bytes: [UInt8] in [[0x63, 0x2D, 0x00, 0x62], [0x63, 0x00], [0x00]] {
            #expect(throws: WireError(code: .invalidField, message: "query: \(field) holds a NUL byte"), "\(bytes)") {
                try Query.decode(frame(bytes))
            }
        }
    }

    /// A string set to "" explicitly (as some encoders write it) decodes as "", as one never
    /// set does (protobuf-c leaves its static empty string there).
    @Test func unsetAndExplicitlyEmptyStringsDecodeAsEmpty() throws {
        let explicit = ProtoWriter.build { query in
            query.message(field: 1) { status in
                status.string(field: 1, "")
                status.string(field: 2, "")
                status.message(field: 3) { viewer in
                    viewer.string(field: 1, "")
                    viewer.string(field: 2, "")
                    viewer.string(field: 3, "")
                }
            }
        }
        let unset = ProtoWriter.build { query in
            query.message(field: 1) { $0.message(field: 3) { _ in } }
        }
        let empty = Query.messageStatus(conversation: "", message: "", viewer: Viewer(user: ""))
        #expect(try Query.decode(explicit) == empty)
        #expect(try Query.decode(unset) == empty)
        let counts = ProtoWriter.build { query in
            query.message(field: 4) { counts in
                counts.string(field: 1, "")
                counts.string(field: 2, "")
            }
        }
        #expect(try Query.decode(counts) == .unreadCounts(user: "", conversations: [""]))
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
