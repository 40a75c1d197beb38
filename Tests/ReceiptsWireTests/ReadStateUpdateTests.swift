import ReceiptsCore
import ReceiptsWire
import Testing

/// The wire of issue 23: `ReadStateUpdate` frames, unread counts with the position in the
/// user's read-state stream they include, and paged "Read by" queries with their cursors.
struct ReadStateUpdateTests {
    /// A random read state, `unread` within what `uint32` carries.
    static func unreadCount(_ random: inout SeededGenerator) -> UnreadCount {
        UnreadCount(
            conversation: random.string(),
            unread: Int(UInt32.random(in: 0...UInt32.max, using: &random)),
            isMarkedUnread: random.bool(),
            readUpTo: random.uint64(),
            hasLeft: random.bool()
        )
    }

    /// An update with every field set to a value that is not its default.
    static let full = ReadStateUpdate(
        publisherRun: 7,
        sequence: 300,
        change: ReadStateChange(
            user: "bob",
            state: UnreadCount(conversation: "c1", unread: 4, isMarkedUnread: true, readUpTo: 12, hasLeft: true),
            time: Timestamp(milliseconds: -2)
        )
    )

    /// `full` written by hand from the proto's field numbers, as a gateway in another language
    /// would read it.
    static let fullBytes = ProtoWriter.build { update in
        update.string(field: 1, "bob")
        update.varint(field: 2, 7)
        update.varint(field: 3, 300)
        update.message(field: 4) { state in
            state.string(field: 1, "c1")
            state.varint(field: 2, 4)
            state.varint(field: 3, 1)
            state.varint(field: 4, 12)
            state.varint(field: 5, 1)
        }
        update.varint(field: 5, UInt64(bitPattern: -2))
    }

    // MARK: - ReadStateUpdate

    @Test func roundTripsRandomUpdates() throws {
        var random = SeededGenerator(seed: 230)
        for _ in 0..<500 {
            let update = ReadStateUpdate(
                publisherRun: random.uint64(),
                sequence: random.uint64(),
                change: ReadStateChange(
                    user: random.string(),
                    state: Self.unreadCount(&random),
                    time: random.timestamp()
                )
            )
            #expect(try ReadStateUpdate.decode(update.encode()) == update)
        }
    }

    @Test func fieldNumbersFollowTheProto() throws {
        #expect(Self.full.encode() == Self.fullBytes)
        #expect(try ReadStateUpdate.decode(Self.fullBytes) == Self.full)
    }

    @Test func anUpdateWithoutAStateReadsAsTheEmptyState() throws {
        let frame = ProtoWriter.build { update in
            update.string(field: 1, "bob")
            update.varint(field: 3, 1)
        }
        let update = try ReadStateUpdate.decode(frame)
        #expect(update.change.user == "bob")
        #expect(update.sequence == 1)
        #expect(update.change.state == UnreadCount(conversation: "", unread: 0, isMarkedUnread: false, readUpTo: 0))
        #expect(update.change.time == Timestamp(milliseconds: 0))
    }

    @Test func undecodableBytesThrow() {
        // A state of 5 bytes of which 1 is there; a varint that never ends; a field of wire type 7.
        for frame: [UInt8] in [[0x22, 0x05, 0x30], [0x10] + Array(repeating: 0xFF, count: 11), [0x0F, 0x00]] {
            #expect(throws: WireError.self, "\(frame)") { try ReadStateUpdate.decode(frame) }
        }
        // Cut inside a field; a cut between two fields (after 5, 7, 10 and 24 bytes) leaves a
        // shorter but whole update.
        #expect(Self.fullBytes.count == 35)
        for length in 1..<Self.fullBytes.count where ![5, 7, 10, 24].contains(length) {
            #expect(throws: WireError.self, "cut at \(length)") {
                try ReadStateUpdate.decode(Array(Self.fullBytes[..<length]))
            }
        }
        var random = SeededGenerator(seed: 231)
        for _ in 0..<3_000 {
            let frame = (0..<Int.random(in: 0...48, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? ReadStateUpdate.decode(frame)
        }
    }

    // MARK: - Unread counts, the per-user snapshot

    @Test func unreadCountsCarryTheirEpochAndSequence() throws {
        var random = SeededGenerator(seed: 232)
        for _ in 0..<300 {
            let reply = QueryReply.unreadCounts(
                (0..<Int.random(in: 0...4, using: &random)).map { _ in Self.unreadCount(&random) },
                publisherRun: random.uint64(),
                sequence: random.uint64()
            )
            #expect(try QueryReply.decode(reply.encode()) == reply)
        }
        let frame = ProtoWriter.build { reply in
            reply.message(field: 4) { counts in
                counts.message(field: 1) { count in
                    count.string(field: 1, "c1")
                    count.varint(field: 5, 1)
                }
                counts.varint(field: 2, 9)
                counts.varint(field: 3, 41)
            }
        }
        let left = UnreadCount(conversation: "c1", unread: 0, isMarkedUnread: false, readUpTo: 0, hasLeft: true)
        #expect(try QueryReply.decode(frame) == .unreadCounts([left], publisherRun: 9, sequence: 41))
        #expect(
            QueryReply.unreadCounts([left], publisherRun: 9, sequence: 41).encode() == frame,
            "the hand-written bytes are the encoding"
        )
    }

    // MARK: - Paged "Read by"

    @Test func readDetailQueriesCarryTheirPageSizeAndCursor() throws {
        let queries: [Query] = [
            .readDetail(conversation: "c", message: "m"),
            .readDetail(conversation: "c", message: "m", pageSize: 333),
            .readDetail(conversation: "c", message: "m", pageSize: 1, cursor: "1/1700000000000/a/b"),
            .readDetail(conversation: "c", message: "m", pageSize: Int(UInt32.max), cursor: "garbage"),
            .readDetail(conversation: "c", message: "m", pageSize: 0, cursor: "3/0/u"),
        ]
        for query in queries {
            #expect(try Query.decode(query.encode()) == query)
        }
        let frame = ProtoWriter.build { query in
            query.message(field: 2) { detail in
                detail.string(field: 1, "c")
                detail.string(field: 2, "m")
                detail.varint(field: 3, 50)
                detail.string(field: 4, "2/0/zed")
            }
        }
        #expect(
            try Query.decode(frame) == .readDetail(conversation: "c", message: "m", pageSize: 50, cursor: "2/0/zed")
        )
        // Sizes the wire's uint32 cannot carry are clamped into it.
        #expect(
            try Query.decode(Query.readDetail(conversation: "c", message: "m", pageSize: -5).encode())
                == .readDetail(conversation: "c", message: "m")
        )
        #expect(
            try Query.decode(Query.readDetail(conversation: "c", message: "m", pageSize: .max).encode())
                == .readDetail(conversation: "c", message: "m", pageSize: Int(UInt32.max))
        )
    }

    @Test func aSheetCarriesItsNextCursor() throws {
        var random = SeededGenerator(seed: 233)
        let cursors: [String?] = [
            nil,
            ReadDetailCursor(state: .read, readAt: 1_700_000_000_000, user: "bob").token(
                conversation: "c",
                message: "m"
            ),
            ReadDetailCursor(state: .delivered, readAt: 0, user: "🙂 é").token(conversation: "c", message: "m"),
        ]
        for cursor in cursors {
            let reply = QueryReply.readDetail(
                ReadDetail(
                    status: random.messageStatus(),
                    read: random.recipientReceipts(),
                    delivered: random.recipientReceipts(),
                    notDelivered: random.recipientReceipts(),
                    nextCursor: cursor
                )
            )
            #expect(try QueryReply.decode(reply.encode()) == reply)
        }
        // The token is carried as it is: the client never reads it.
        let frame = ProtoWriter.build { reply in
            reply.message(field: 2) { $0.string(field: 5, "2/0/zed") }
        }
        guard case .readDetail(let detail) = try QueryReply.decode(frame) else {
            Issue.record("expected a read detail")
            return
        }
        #expect(detail.nextCursor == "2/0/zed")
    }
}
