import ReceiptsWire
import Testing

/// A primary's messages on the replication wire (deploy/REPLICATION.md section 4.3): one
/// frame, or two for records and snapshot chunks.
struct ReplicationMessageTests {
    static let records = ReplicationMessage.Records(
        session: 11,
        term: 3,
        start: 4096,
        bytes: [3, 0, 0, 0, 1, 0xA, 0xB, 0xC, 0, 0, 0, 0, 0],
        acknowledged: 4000,
        primaryEnd: 9000
    )

    static let firstChunk = ReplicationMessage.SnapshotChunk(
        session: 11,
        position: 4096,
        fileBytes: 100,
        offset: 0,
        bytes: Array(repeating: 7, count: 60),
        terms: [TermStart(term: 1, start: 0, member: "receiptd-3"), TermStart(term: 3, start: 50, member: "r-b-3")],
        engineSettings: "retention-days=30\n"
    )

    static let everyKind: [ReplicationMessage] = [
        .accepted(ReplicationMessage.FollowAccepted(session: 11, term: 3, continueAt: 4096, snapshotFirst: true)),
        .accepted(ReplicationMessage.FollowAccepted(session: 0, term: 0, continueAt: 0, snapshotFirst: false)),
        .records(records),
        .records(
            ReplicationMessage.Records(
                session: 1,
                term: 1,
                start: UInt64.max - 1,
                bytes: [9],
                acknowledged: 0,
                primaryEnd: UInt64.max
            )
        ),
        .snapshot(firstChunk),
        .snapshot(
            ReplicationMessage.SnapshotChunk(
                session: 11,
                position: 4096,
                fileBytes: 100,
                offset: 60,
                bytes: Array(repeating: 8, count: 40)
            )
        ),
        .snapshot(ReplicationMessage.SnapshotChunk(session: 1, position: 0, fileBytes: 0, offset: 0, bytes: [])),
        .heartbeat(
            ReplicationMessage.Heartbeat(session: 11, term: 3, acknowledged: 8, primaryEnd: 10, primaryDurable: 9)
        ),
        .refused(
            session: 11,
            error: ErrorReply(
                code: .notPrimary,
                message: "standby",
                primary: ErrorReply.Primary(member: "receiptd-b-3", ingest: "tcp://b:7001", query: "tcp://b:7002"),
                term: 3
            )
        ),
        .refused(session: 11, error: ErrorReply(code: .notPrimary, message: "election under way", term: 4)),
        .refused(session: 11, error: ErrorReply(code: .invalidArgument, message: "engine settings differ")),
    ]

    @Test(arguments: everyKind)
    func roundTripsEveryKind(message: ReplicationMessage) throws {
        let frames = message.encode()
        #expect(try ReplicationMessage.decode(frames) == message)
        switch message {
        case .records(let records):
            #expect(frames.count == 2 && frames[1] == records.bytes)
        case .snapshot(let chunk):
            #expect(frames.count == 2 && frames[1] == chunk.bytes)
        default:
            #expect(frames.count == 1)
        }
    }

    @Test func recordsAndChunksSayWhereTheyEnd() {
        #expect(Self.records.end == 4096 + 13)
        #expect(!Self.firstChunk.isLast)
        var last = Self.firstChunk
        last.offset = 40
        #expect(last.isLast)
    }

    @Test func refusesBytesThatAreNotAMessage() {
        #expect(
            wireErrorCode {
                try ReplicationMessage.decode([[0x0A, 0x7F]])
            } == .malformedFrame
        )
        let newer = ProtoWriter.build { $0.message(field: 12) { $0.varint(field: 1, 1) } }
        #expect(
            wireErrorCode {
                try ReplicationMessage.decode([newer])
            } == .unknownKind
        )
    }

    @Test func refusesAWrongFrameCount() {
        let records = ReplicationMessage.records(Self.records).encode()
        let chunk = ReplicationMessage.snapshot(Self.firstChunk).encode()
        let heartbeat = ReplicationMessage.heartbeat(
            ReplicationMessage.Heartbeat(session: 1, term: 1, acknowledged: 1, primaryEnd: 1, primaryDurable: 1)
        ).encode()
        let wrong: [[[UInt8]]] = [
            [], [records[0]], [chunk[0]], records + [[]], heartbeat + [[1]], [heartbeat[0], [], []],
        ]
        for frames in wrong {
            #expect(
                wireErrorCode { try ReplicationMessage.decode(frames) } == .wrongFrameCount,
                "\(frames.map(\.count))"
            )
        }
    }

    @Test func refusesFramesOverTheirBounds() {
        var records = Self.records
        records.bytes = Array(repeating: 0, count: ReplicationFrames.maxRecordsBytes + 1)
        #expect(
            wireErrorCode {
                try ReplicationMessage.decode(ReplicationMessage.records(records).encode())
            } == .frameTooLarge
        )
        records.bytes.removeLast()
        #expect(throws: Never.self) { try ReplicationMessage.decode(ReplicationMessage.records(records).encode()) }

        var chunk = Self.firstChunk
        chunk.bytes = Array(repeating: 0, count: ReplicationFrames.maxChunkBytes + 1)
        chunk.fileBytes = UInt64(chunk.bytes.count)
        #expect(
            wireErrorCode {
                try ReplicationMessage.decode(ReplicationMessage.snapshot(chunk).encode())
            } == .frameTooLarge
        )

        chunk = Self.firstChunk
        chunk.engineSettings = String(repeating: "s", count: ReplicationFrames.maxBodyBytes)
        #expect(
            wireErrorCode {
                try ReplicationMessage.decode(ReplicationMessage.snapshot(chunk).encode())
            } == .frameTooLarge
        )
    }

    /// A Records body with these positions, for a frame 2 of `count` bytes.
    static func recordsFrames(start: UInt64, end: UInt64, count: Int) -> [[UInt8]] {
        let body = ProtoWriter.build { w in
            w.message(field: 2) { r in
                r.varint(field: 1, 11)
                r.varint(field: 3, start)
                r.varint(field: 4, end)
            }
        }
        return [body, Array(repeating: 1, count: count)]
    }

    @Test func refusesRecordsWhosePositionsDoNotSpanFrame2() throws {
        #expect(throws: Never.self) { try ReplicationMessage.decode(Self.recordsFrames(start: 10, end: 15, count: 5)) }
        let bad: [(UInt64, UInt64, Int)] = [(10, 16, 5), (10, 14, 5), (15, 10, 5), (10, 10, 0), (0, 0, 0)]
        for (start, end, count) in bad {
            let code = wireErrorCode {
                try ReplicationMessage.decode(Self.recordsFrames(start: start, end: end, count: count))
            }
            #expect(code == .invalidField, "\(start) \(end) \(count)")
        }
    }

    /// A SnapshotChunk body with these numbers, for a frame 2 of `count` bytes.
    static func chunkFrames(fileBytes: UInt64, offset: UInt64, last: Bool, count: Int) -> [[UInt8]] {
        let body = ProtoWriter.build { w in
            w.message(field: 3) { c in
                c.varint(field: 1, 11)
                c.varint(field: 3, fileBytes)
                c.varint(field: 4, offset)
                c.varint(field: 5, last ? 1 : 0)
            }
        }
        return [body, Array(repeating: 2, count: count)]
    }

    @Test func refusesChunksThatDoNotFitTheirFile() {
        #expect(throws: Never.self) {
            try ReplicationMessage.decode(Self.chunkFrames(fileBytes: 10, offset: 4, last: true, count: 6))
        }
        #expect(throws: Never.self) {
            try ReplicationMessage.decode(Self.chunkFrames(fileBytes: 10, offset: 0, last: false, count: 6))
        }
        let bad: [(UInt64, UInt64, Bool, Int)] = [
            (10, 4, false, 6),  // ends the file without saying so
            (10, 0, true, 6),  // says it is last before the end
            (10, 6, true, 6),  // runs past the file
            (10, UInt64.max, true, 6),  // its end overflows
        ]
        for (fileBytes, offset, last, count) in bad {
            let code = wireErrorCode {
                try ReplicationMessage.decode(
                    Self.chunkFrames(fileBytes: fileBytes, offset: offset, last: last, count: count)
                )
            }
            #expect(code == .invalidField, "\(fileBytes) \(offset) \(last) \(count)")
        }
    }

    @Test func refusesStringsThatAreNotUTF8OrHoldANUL() {
        let badTerm = ProtoWriter.build { w in
            w.message(field: 3) { c in
                c.varint(field: 3, 1)
                c.varint(field: 5, 1)
                c.message(field: 6) { $0.bytes(field: 3, [0x72, 0xC3]) }
            }
        }
        #expect(throws: WireError(code: .invalidField, message: "SnapshotChunk: terms.member is not valid UTF-8")) {
            try ReplicationMessage.decode([badTerm, [0]])
        }
        let badSettings = ProtoWriter.build { w in
            w.message(field: 3) { c in
                c.varint(field: 3, 1)
                c.varint(field: 5, 1)
                c.bytes(field: 7, Array("a\0b".utf8))
            }
        }
        #expect(throws: WireError(code: .invalidField, message: "SnapshotChunk: engine_settings holds a NUL byte")) {
            try ReplicationMessage.decode([badSettings, [0]])
        }
        let badPrimary = ProtoWriter.build { w in
            w.message(field: 5) { r in
                r.varint(field: 1, 11)
                r.message(field: 2) { e in
                    e.varint(field: 1, 11)
                    e.bytes(field: 4, Array("receiptd-b\0-3".utf8))
                }
            }
        }
        #expect(throws: WireError(code: .invalidField, message: "FollowRefused: error.primary_member holds a NUL byte"))
        {
            try ReplicationMessage.decode([badPrimary])
        }
    }
}
