import ReceiptsCore
import ReceiptsWire
import Testing

struct EventBatchCodecTests {
    static let everyKind: [EventKind] = [
        .conversationUpserted(conversation: "c1", kind: .direct, members: ["alice", "bob"]),
        .conversationUpserted(conversation: "c2", kind: .group, members: []),
        .memberJoined(conversation: "c2", user: "carol"),
        .memberLeft(conversation: "c2", user: "carol"),
        .messageSent(conversation: "c1", message: "m1", sender: "alice", isSystem: false),
        .messageSent(conversation: "c2", message: "sys", sender: "alice", isSystem: true),
        .messageSent(
            conversation: "c2",
            message: "m2",
            sender: "alice",
            isSystem: false,
            mentions: Mentions(users: ["bob", "carol", "bob"], everyone: true)
        ),
        .messageSent(
            conversation: "c2",
            message: "m3",
            sender: "alice",
            isSystem: false,
            mentions: Mentions(everyone: true)
        ),
        .delivered(conversation: "c1", user: "bob", message: "m1"),
        .read(conversation: "c1", user: "bob", message: "m1"),
        .read(conversation: "c1", user: "bob", message: nil),
        .messageEdited(conversation: "c1", message: "m1"),
        .messageDeleted(conversation: "c1", message: "m1"),
        .userDeleted(user: "bob"),
        .receiptPrivacy(user: "bob", shareReads: false),
        .receiptPrivacy(user: "bob", shareReads: true),
        .conversationReceiptPrivacy(conversation: "c1", user: "bob", shareReads: false),
        .markedUnread(conversation: "c1", user: "bob"),
        .messageSent(conversation: "c1", message: "r1", sender: "bob", isSystem: false, thread: "m1"),
        .delivered(conversation: "c1", user: "alice", message: "r1", thread: "m1"),
        .delivered(conversation: "c1", user: "alice", message: "", thread: "m1"),
        .read(conversation: "c1", user: "alice", message: nil, thread: "m1"),
        .threadFollowed(conversation: "c1", user: "carol", thread: "m1", follows: true),
        .threadFollowed(conversation: "c1", user: "carol", thread: "m1", follows: false),
        .unknown,
    ]

    @Test(arguments: everyKind)
    func roundTripsEveryKind(kind: EventKind) throws {
        let event = Event(
            id: EventID(source: "gw-1", sequence: 42),
            clientTime: Timestamp(milliseconds: 1_700_000_000_000),
            kind: kind
        )
        #expect(try EventBatchCodec.decode(EventBatchCodec.encode([event])) == [event])
        let withoutTime = Event(id: EventID(source: "gw-1", sequence: 43), kind: kind)
        #expect(try EventBatchCodec.decode(EventBatchCodec.encode([withoutTime])) == [withoutTime])
    }

    @Test func roundTripsRandomBatches() throws {
        var random = SeededGenerator(seed: 1)
        for _ in 0..<500 {
            let events = (0..<Int.random(in: 0...20, using: &random)).map { _ in random.event() }
            #expect(try EventBatchCodec.decode(EventBatchCodec.encode(events)) == events)
        }
    }

    @Test func roundTripsExtremeValues() throws {
        let events = [
            Event(id: EventID(source: "", sequence: 0), clientTime: Timestamp(milliseconds: .min), kind: .unknown),
            Event(
                id: EventID(source: "s", sequence: .max),
                clientTime: Timestamp(milliseconds: .max),
                kind: .userDeleted(user: "")
            ),
            Event(
                id: EventID(source: "s", sequence: 1),
                clientTime: Timestamp(milliseconds: -1),
                kind: .userDeleted(user: String(repeating: "🙂", count: 10_000))
            ),
        ]
        #expect(try EventBatchCodec.decode(EventBatchCodec.encode(events)) == events)
    }

    /// An EventBatch holding one MessageSent, encoded by hand from the protobuf rules:
    /// field 1 (events), then in the Event field 1 (id: source "g", sequence 1) and
    /// field 13 (message_sent: "c", "m", "a"; system false is omitted, as is client time 0).
    static let oneMessageSent: [UInt8] = [
        0x0A, 0x12,  // EventBatch.events, 18 bytes
        0x0A, 0x05, 0x0A, 0x01, 0x67, 0x10, 0x01,  // Event.id { source "g", sequence 1 }
        0x6A, 0x09, 0x0A, 0x01, 0x63, 0x12, 0x01, 0x6D, 0x1A, 0x01, 0x61,  // Event.message_sent
    ]

    @Test func encodesTheBytesTheProtobufRulesGive() throws {
        let event = Event(
            id: EventID(source: "g", sequence: 1),
            kind: .messageSent(conversation: "c", message: "m", sender: "a", isSystem: false)
        )
        #expect(EventBatchCodec.encode([event]) == Self.oneMessageSent)
        #expect(try EventBatchCodec.decode(Self.oneMessageSent) == [event])
    }

    @Test func decodesBytesFromAnotherEncoder() throws {
        // Fields out of order, client time set, system true, a Read with the message id absent.
        let frame = ProtoWriter.build { batch in
            batch.message(field: 1) { event in
                event.message(field: 13) { sent in
                    sent.varint(field: 4, 1)
                    sent.string(field: 3, "alice")
                    sent.string(field: 1, "conv")
                    sent.string(field: 2, "msg")
                }
                event.varint(field: 2, 1234)
                event.message(field: 1) { id in
                    id.varint(field: 2, 300)
                    id.string(field: 1, "src")
                }
            }
            batch.message(field: 1) { event in
                event.message(field: 15) { read in
                    read.string(field: 1, "conv")
                    read.string(field: 2, "bob")
                }
            }
        }
        #expect(
            try EventBatchCodec.decode(frame) == [
                Event(
                    id: EventID(source: "src", sequence: 300),
                    clientTime: Timestamp(milliseconds: 1234),
                    kind: .messageSent(conversation: "conv", message: "msg", sender: "alice", isSystem: true)
                ),
                Event(
                    id: EventID(source: "", sequence: 0),
                    kind: .read(conversation: "conv", user: "bob", message: nil)
                ),
            ]
        )
    }

    @Test func emptyFrameIsAnEmptyBatch() throws {
        #expect(try EventBatchCodec.decode([]) == [])
        #expect(try EventBatchCodec.decode(UnsafeRawBufferPointer(start: nil, count: 0)) == [])
        #expect(EventBatchCodec.encode([]) == [])
    }

    @Test func eventWithNoKindDecodesAsUnknown() throws {
        let frame = ProtoWriter.build { batch in
            batch.message(field: 1) { event in
                event.message(field: 1) { id in
                    id.string(field: 1, "gw")
                    id.varint(field: 2, 7)
                }
            }
            batch.message(field: 1) { _ in }
        }
        #expect(
            try EventBatchCodec.decode(frame) == [
                Event(id: EventID(source: "gw", sequence: 7), kind: .unknown),
                Event(id: EventID(source: "", sequence: 0), kind: .unknown),
            ]
        )
    }

    @Test func kindFromANewerGatewayDecodesAsUnknownAndTheRestProceeds() throws {
        let known = Event(id: EventID(source: "gw", sequence: 2), kind: .userDeleted(user: "u"))
        let frame =
            ProtoWriter.build { batch in
                batch.message(field: 1) { event in
                    event.message(field: 1) { $0.varint(field: 2, 1) }
                    event.message(field: 90) { $0.string(field: 1, "future") }  // not in this build's oneof
                    event.varint(field: 99, 5)  // an unknown scalar field is skipped
                }
            } + EventBatchCodec.encode([known])
        #expect(
            try EventBatchCodec.decode(frame) == [Event(id: EventID(source: "", sequence: 1), kind: .unknown), known]
        )
    }

    /// A conversation kind of UNSPECIFIED (0) or a number this build does not know is a known
    /// event kind with an invalid field: INVALID_EVENT naming the field, not UNKNOWN_EVENT_KIND.
    @Test(arguments: [0, 3, 99, UInt64.max])
    func conversationKindThatIsNotDirectOrGroupIsAnInvalidEvent(kind: UInt64) throws {
        let frame = ProtoWriter.build { batch in
            batch.message(field: 1) { event in
                event.message(field: 1) { id in
                    id.string(field: 1, "gw")
                    id.varint(field: 2, 1)
                }
                event.message(field: 10) { upserted in
                    upserted.string(field: 1, "c")
                    upserted.varint(field: 2, kind)
                    upserted.string(field: 3, "a")
                }
            }
        }
        let events = try EventBatchCodec.decode(frame)
        #expect(events.count == 1)
        var engine = ReceiptEngine()
        let outcome = try #require(events.first.map { engine.apply($0, at: Timestamp(milliseconds: 1)).outcome })
        guard case .rejected(let rejection) = outcome else {
            Issue.record("expected a rejection, got \(outcome)")
            return
        }
        #expect(rejection.reason == .invalidEvent, "\(rejection)")
        #expect(rejection.detail.contains("conversation_upserted.kind"), "\(rejection.detail)")
    }

    /// An EventBatch of `count` events from gateway "gw" (user_deleted of "u"), whose event at
    /// `index` is built by `change` instead: a protobuf-c gateway's frame, with any bytes in it.
    static func batch(count: Int = 3, changing index: Int, _ change: (inout ProtoWriter) -> Void) -> [UInt8] {
        ProtoWriter.build { batch in
            for i in 0..<count {
                batch.message(field: 1) { event in
                    if i == index {
                        change(&event)
                    } else {
                        event.message(field: 1) { id in
                            id.string(field: 1, "gw")
                            id.varint(field: 2, UInt64(i + 1))
                        }
                        event.message(field: 18) { $0.string(field: 1, "u") }
                    }
                }
            }
        }
    }

    /// Bytes that are not UTF-8: a lone 0xFF, a lead byte without its continuation, an encoded surrogate.
    static let notUTF8: [UInt8] = [0x6E, 0x78, 0x2D, 0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80]

    /// Every id field of every event kind, built with the given bytes, and the field's protobuf
    /// name that a refusal must give.
    static let idFields: [(field: String, build: @Sendable (inout ProtoWriter, [UInt8]) -> Void)] = [
        ("id.source", { event, bytes in event.message(field: 1) { $0.bytes(field: 1, bytes) } }),
        ("conversation_id", { event, bytes in event.message(field: 10) { $0.bytes(field: 1, bytes) } }),
        (
            "member_ids[1]",
            { event, bytes in
                event.message(field: 10) { upserted in
                    upserted.string(field: 1, "c")
                    upserted.varint(field: 2, 2)
                    upserted.string(field: 3, "a")
                    upserted.bytes(field: 3, bytes)
                }
            }
        ),
        ("user_id", { event, bytes in event.message(field: 11) { $0.bytes(field: 2, bytes) } }),
        ("conversation_id", { event, bytes in event.message(field: 12) { $0.bytes(field: 1, bytes) } }),
        ("message_id", { event, bytes in event.message(field: 13) { $0.bytes(field: 2, bytes) } }),
        ("sender_id", { event, bytes in event.message(field: 13) { $0.bytes(field: 3, bytes) } }),
        ("message_id", { event, bytes in event.message(field: 14) { $0.bytes(field: 3, bytes) } }),
        ("user_id", { event, bytes in event.message(field: 15) { $0.bytes(field: 2, bytes) } }),
        ("message_id", { event, bytes in event.message(field: 15) { $0.bytes(field: 3, bytes) } }),
        ("message_id", { event, bytes in event.message(field: 16) { $0.bytes(field: 2, bytes) } }),
        ("conversation_id", { event, bytes in event.message(field: 17) { $0.bytes(field: 1, bytes) } }),
        ("user_id", { event, bytes in event.message(field: 18) { $0.bytes(field: 1, bytes) } }),
        ("user_id", { event, bytes in event.message(field: 19) { $0.bytes(field: 1, bytes) } }),
        ("user_id", { event, bytes in event.message(field: 20) { $0.bytes(field: 2, bytes) } }),
    ]

    /// protobuf-c does not check UTF-8, so a C gateway can send any bytes in a string field.
    /// Repairing them would make different ids one ("nx-\xff" and "nx-\xfe" both "nx-\u{FFFD}"):
    /// the frame is refused whole, naming the event and the field.
    @Test(arguments: idFields.indices)
    func invalidUTF8IsRefusedNamingTheEventAndTheField(idField: Int) throws {
        let (field, build) = Self.idFields[idField]
        let frame = Self.batch(changing: 1) { build(&$0, Self.notUTF8) }
        #expect(throws: WireError(code: .invalidField, message: "event 1: \(field) is not valid UTF-8")) {
            try EventBatchCodec.decode(frame)
        }
        // Replaying a log repairs every one of them instead (see invalidUTF8IsRepairedWhenAsked).
        #expect(try EventBatchCodec.decode(frame, invalidUTF8: .repair).count == 3)
    }

    /// Ids that differ only in bytes that are not UTF-8 ("gw-\xff", "gw-\xfe") never decode as one id.
    @Test(arguments: [UInt8(0xFF), 0xFE])
    func idsThatDifferInBytesThatAreNotUTF8AreRefused(bad: UInt8) {
        let frame = Self.batch(count: 1, changing: 0) { event in
            event.message(field: 1) { id in
                id.bytes(field: 1, Array("gw-".utf8) + [bad])
                id.varint(field: 2, 1)
            }
            event.message(field: 10) { $0.bytes(field: 1, Array("nx-".utf8) + [bad]) }
        }
        #expect(throws: WireError(code: .invalidField, message: "event 0: id.source is not valid UTF-8")) {
            try EventBatchCodec.decode(frame)
        }
    }

    /// Frames a log took before intake refused ids that are not UTF-8 replay as they were
    /// applied then: repaired with U+FFFD.
    @Test func invalidUTF8IsRepairedWhenAsked() throws {
        let frame = ProtoWriter.build { batch in
            batch.message(field: 1) { event in
                event.message(field: 18) { $0.bytes(field: 1, [0x61, 0xFF, 0xC3, 0x28, 0xED, 0xA0, 0x80, 0x62]) }
            }
        }
        let events = try EventBatchCodec.decode(frame, invalidUTF8: .repair)
        guard case .userDeleted(let user) = events.first?.kind else {
            Issue.record("expected a userDeleted event, got \(events)")
            return
        }
        #expect(user.hasPrefix("a"))
        #expect(user.hasSuffix("b"))
        #expect(user.unicodeScalars.contains("\u{FFFD}"))
        #expect(String(validating: Array(user.utf8), as: UTF8.self) == user)
    }

    /// Ids holding a NUL byte: valid UTF-8 that a Go or Python gateway can send, and that a C
    /// string would end at the NUL ("a\0b" and "a\0c" both "a").
    static let withNUL: [[UInt8]] = [[0x61, 0x00, 0x62], [0x61, 0x00], [0x00], [0x00, 0x61], [0x61, 0x00, 0xFF]]

    /// protobuf-c hands string fields over NUL-terminated, so an id holding a NUL would be cut
    /// there and merge with others ("nx-\0b" and "nx-\0c" both "nx-"): the frame is refused
    /// whole, naming the event and the field, wherever the NUL is.
    @Test(arguments: idFields.indices)
    func nulIsRefusedNamingTheEventAndTheField(idField: Int) throws {
        let (field, build) = Self.idFields[idField]
        for bytes in Self.withNUL {
            let frame = Self.batch(changing: 1) { build(&$0, Array("nx-".utf8) + bytes) }
            #expect(throws: WireError(code: .invalidField, message: "event 1: \(field) holds a NUL byte"), "\(bytes)") {
                try EventBatchCodec.decode(frame)
            }
        }
    }

    /// Ids that differ only after a NUL byte never decode as one id.
    @Test(arguments: [UInt8(0x62), 0x63])
    func idsThatDifferAfterANULAreRefused(last: UInt8) {
        let frame = Self.batch(count: 1, changing: 0) { event in
            event.message(field: 1) { id in
                id.string(field: 1, "gw")
                id.varint(field: 2, 1)
            }
            event.message(field: 10) { $0.bytes(field: 1, [0x61, 0x00, last]) }
        }
        #expect(throws: WireError(code: .invalidField, message: "event 0: conversation_id holds a NUL byte")) {
            try EventBatchCodec.decode(frame)
        }
    }

    /// Frames a log took before intake refused ids holding a NUL replay as they were applied
    /// then: cut at the first NUL, so recovery reaches the state those frames made.
    @Test(arguments: idFields.indices)
    func nulEndsTheIdWhenRepairing(idField: Int) throws {
        let build = Self.idFields[idField].build
        let cut = try EventBatchCodec.decode(Self.batch(changing: 1) { build(&$0, Array("nx-".utf8)) })
        for tail: [UInt8] in [[0x00], [0x00, 0x62], [0x00, 0x63, 0x00], [0x00, 0xFF]] {
            let frame = Self.batch(changing: 1) { build(&$0, Array("nx-".utf8) + tail) }
            #expect(try EventBatchCodec.decode(frame, invalidUTF8: .repair) == cut, "\(tail)")
        }
    }

    /// A string field never set (protobuf-c leaves its static empty string there) and one set
    /// to "" explicitly (as some encoders write it) both decode as "".
    @Test func unsetAndExplicitlyEmptyStringsDecodeAsEmpty() throws {
        let frame = ProtoWriter.build { batch in
            batch.message(field: 1) { event in
                event.message(field: 1) { id in
                    id.string(field: 1, "")
                    id.varint(field: 2, 1)
                }
                event.message(field: 13) { sent in
                    sent.string(field: 1, "")
                    sent.string(field: 2, "")
                    sent.string(field: 3, "")
                }
            }
            batch.message(field: 1) { event in
                event.message(field: 1) { $0.varint(field: 2, 1) }
                event.message(field: 13) { _ in }
            }
            batch.message(field: 1) { event in
                event.message(field: 10) { upserted in
                    upserted.string(field: 1, "")
                    upserted.varint(field: 2, 2)
                    upserted.string(field: 3, "")
                }
            }
        }
        let sent = Event(
            id: EventID(source: "", sequence: 1),
            kind: .messageSent(conversation: "", message: "", sender: "", isSystem: false)
        )
        let upserted = Event(
            id: EventID(source: "", sequence: 0),
            kind: .conversationUpserted(conversation: "", kind: .group, members: [""])
        )
        #expect(try EventBatchCodec.decode(frame) == [sent, sent, upserted])
    }

    /// protobuf-c allocates every string it unpacks with exactly its length plus the NUL; the
    /// NUL check relies on it, so strings of every length up to past a two-byte length prefix
    /// (and past the 1 KiB stack block) decode whole, in single and repeated fields.
    @Test func stringsOfEveryLengthDecode() throws {
        for length in Array(0..<300) + [1_023, 1_024, 1_025, 70_000] {
            let id = String(repeating: "é", count: length / 2) + String(repeating: "x", count: length % 2)
            let event = Event(
                id: EventID(source: id, sequence: 1),
                kind: .conversationUpserted(conversation: id, kind: .group, members: [id, "a" + id, ""])
            )
            #expect(try EventBatchCodec.decode(EventBatchCodec.encode([event])) == [event], "length \(length)")
        }
    }

    @Test func everyPrefixOfAValidBatchDecodesOrThrows() throws {
        var random = SeededGenerator(seed: 2)
        let events = (0..<12).map { _ in random.event() }
        let frame = EventBatchCodec.encode(events)
        var decodedPrefixes = 0
        for length in 0..<frame.count {
            do {
                _ = try EventBatchCodec.decode(Array(frame[..<length]))
                decodedPrefixes += 1
            } catch {
                #expect(error.code == .malformedFrame)
            }
        }
        #expect(decodedPrefixes >= 1)  // at least the empty prefix and whole-event boundaries
        #expect(try EventBatchCodec.decode(frame) == events)
    }

    @Test func garbageIsMalformed() {
        let frames: [[UInt8]] = [
            Array("hello, world".utf8),
            [0xFF],
            [0x0A],  // a field tag and nothing else
            [0x0A, 0x05, 0x01],  // a length prefix past the end
            [0x0B],  // wire type 3 (start group) is not valid here
            [0x0F, 0x00],  // wire type 7 does not exist
            [0x00, 0x00],  // field number 0
            [0x08] + [UInt8](repeating: 0xFF, count: 11),  // a varint longer than 10 bytes
            [0x0A, 0x02, 0x0A, 0x05],  // an inner length past its message
        ]
        for frame in frames {
            #expect(
                throws: WireError(code: .malformedFrame, message: "not a valid EventBatch body (\(frame.count) bytes)")
            ) {
                try EventBatchCodec.decode(frame)
            }
        }
    }

    @Test func oversizedLengthPrefixIsMalformed() {
        for length: UInt64 in [1 << 31, 1 << 32, 1 << 62, .max] {
            var writer = ProtoWriter()
            writer.varint(UInt64(1 << 3 | 2))
            writer.varint(length)
            let frame = writer.bytes + [0x0A, 0x00]
            #expect(throws: WireError.self) { try EventBatchCodec.decode(frame) }
        }
    }

    @Test func randomBytesNeverCrash() {
        var random = SeededGenerator(seed: 3)
        for _ in 0..<20_000 {
            let frame = (0..<Int.random(in: 0...48, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? EventBatchCodec.decode(frame)
        }
    }

    @Test func mutatedValidFramesNeverCrash() {
        var random = SeededGenerator(seed: 4)
        for _ in 0..<5_000 {
            var frame = EventBatchCodec.encode((0..<Int.random(in: 1...4, using: &random)).map { _ in random.event() })
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                frame[Int.random(in: 0..<frame.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            _ = try? EventBatchCodec.decode(frame)
        }
    }

    @Test func hugeRepeatedFieldCounts() throws {
        // 300,000 empty events in 600 KB: every one decodes (to .unknown), none is dropped.
        let frame = [UInt8]([0x0A, 0x00]).repeated(300_000)
        let events = try EventBatchCodec.decode(frame)
        #expect(events.count == 300_000)
        #expect(events.allSatisfy { $0 == Event(id: EventID(source: "", sequence: 0), kind: .unknown) })

        let members = (0..<100_000).map { "user-\($0)" }
        let upsert = Event(
            id: EventID(source: "gw", sequence: 1),
            kind: .conversationUpserted(conversation: "big", kind: .group, members: members)
        )
        #expect(try EventBatchCodec.decode(EventBatchCodec.encode([upsert])) == [upsert])
    }

    /// protobuf-c unpacks into an arena whose first heap block is sized from the frame; a
    /// string bigger than any block gets a block of its own and the events after it still
    /// decode.
    @Test func stringLargerThanAnyArenaBlockDecodes() throws {
        let events = [
            Event(
                id: EventID(source: "gw", sequence: 1),
                kind: .userDeleted(user: String(repeating: "x", count: 9_000_000))
            ),
            Event(id: EventID(source: "gw", sequence: 2), kind: .memberJoined(conversation: "c", user: "u")),
        ]
        #expect(try EventBatchCodec.decode(EventBatchCodec.encode(events)) == events)
    }

    /// Tens of thousands of distinct strings fill several arena blocks; none is cut or mixed up.
    @Test func manyStringsAcrossArenaBlocks() throws {
        let events = (0..<20_000).map { index in
            Event(
                id: EventID(source: "gateway-\(index % 7)", sequence: UInt64(index)),
                kind: .messageSent(
                    conversation: "conversation-\(index)-" + String(repeating: "c", count: index % 40),
                    message: "message-\(index)-é",
                    sender: "sender-\(index)-🙂",
                    isSystem: index % 2 == 0
                )
            )
        }
        #expect(try EventBatchCodec.decode(EventBatchCodec.encode(events)) == events)
    }

    /// Every decode has its own arena, so decodes on many threads at once never share memory.
    @Test func concurrentDecodesKeepTheirOwnArenas() async throws {
        var random = SeededGenerator(seed: 5)
        let batches = (0..<8).map { _ in (0..<50).map { _ in random.event() } }
        let frames = batches.map { EventBatchCodec.encode($0) }
        let mismatches = await withTaskGroup(of: Int.self) { group in
            for (frame, events) in zip(frames, batches) {
                group.addTask {
                    (0..<200).filter { _ in (try? EventBatchCodec.decode(frame)) != events }.count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }
}

extension Array {
    func repeated(_ times: Int) -> [Element] {
        Array((0..<times).map { _ in self }.joined())
    }
}
