import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// What the wire accepts, against the real daemon, from a gateway written in C: ids whose bytes
/// are not UTF-8 (protobuf-c does not check them), a conversation kind that is not direct or
/// group, a viewer's unknown time zone or locale. Each is refused with a reason naming what was
/// wrong, and nothing of it is applied.
@Suite(.serialized, .startsProcesses)
struct WireValidationTests {
    /// `frame` with the one occurrence of `placeholder` replaced by `bytes` of the same length,
    /// so the protobuf lengths around it stay right: how a test writes bytes into a field that
    /// `EventBatchCodec` (Swift strings, Swift enums) cannot.
    private static func replacing(_ placeholder: [UInt8], with bytes: [UInt8], in frame: [UInt8]) throws -> [UInt8] {
        precondition(placeholder.count == bytes.count, "a replacement keeps the length")
        let starts = frame.indices.filter { frame[$0...].starts(with: placeholder) }
        guard starts.count == 1, let start = starts.first else {
            throw IntegrationError("the placeholder occurs \(starts.count) times in the frame, not once")
        }
        var changed = frame
        changed.replaceSubrange(start..<start + placeholder.count, with: bytes)
        return changed
    }

    /// An EventBatch of `events` in which the id `"<prefix>\u{7F}"` becomes `prefix` and the byte
    /// `bad`, which is not UTF-8 (0xFF and 0xFE never are).
    private static func frame(_ events: [Event], id prefix: String, bad: UInt8) throws -> [UInt8] {
        try replacing(
            Array("\(prefix)\u{7F}".utf8),
            with: Array(prefix.utf8) + [bad],
            in: EventBatchCodec.encode(events)
        )
    }

    private static func group(_ conversation: String) -> EventKind {
        .conversationUpserted(conversation: conversation, kind: .group, members: ["a", "b"])
    }

    /// Expects the reply to refuse its whole frame as INVALID_ARGUMENT with `message`.
    private static func expectRefused(_ reply: IngestReply, _ message: String) {
        #expect(reply.results.isEmpty, "a refused frame has no results: \(reply.results)")
        #expect(reply.error == ErrorReply(code: .invalidArgument, message: message), "\(reply)")
    }

    @Test(
        "Ids that are not UTF-8 are refused whole, naming the event and the field; different ids never merge"
    )
    func invalidUTF8IdsAreRefused() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()

        // Two conversations that differ only in a byte that is not UTF-8.
        let first = try Self.frame([events.make(Self.group("nx-\u{7F}"))], id: "nx-", bad: 0xFF)
        Self.expectRefused(
            try IngestReply.decode(try daemon.ingestRaw([first])),
            "event 0: conversation_id is not valid UTF-8"
        )
        let second = try Self.frame(
            [events.make(Self.group("nx-fine")), events.make(Self.group("nx-\u{7F}"))],
            id: "nx-",
            bad: 0xFE
        )
        Self.expectRefused(
            try IngestReply.decode(try daemon.ingestRaw([second])),
            "event 1: conversation_id is not valid UTF-8"
        )

        // Two sources that differ only in a byte that is not UTF-8, each with sequence 1.
        for bad: UInt8 in [0xFF, 0xFE] {
            var source = EventFactory(source: "gw-\u{7F}")
            let frame = try Self.frame([source.make(Self.group("nx-source"))], id: "gw-", bad: bad)
            Self.expectRefused(
                try IngestReply.decode(try daemon.ingestRaw([frame])),
                "event 0: id.source is not valid UTF-8"
            )
        }

        // A message id and a member id.
        let message = try Self.frame(
            [
                events.make(Self.group("nx-ok")),
                events.make(.messageSent(conversation: "nx-ok", message: "m-\u{7F}", sender: "a", isSystem: false)),
            ],
            id: "m-",
            bad: 0xFF
        )
        Self.expectRefused(
            try IngestReply.decode(try daemon.ingestRaw([message])),
            "event 1: message_id is not valid UTF-8"
        )
        let member = try Self.frame(
            [events.make(.conversationUpserted(conversation: "nx-ok", kind: .group, members: ["a", "u-\u{7F}"]))],
            id: "u-",
            bad: 0xFF
        )
        Self.expectRefused(
            try IngestReply.decode(try daemon.ingestRaw([member])),
            "event 0: member_ids[1] is not valid UTF-8"
        )

        // The same events with valid ids after them are applied, on the same connection.
        let valid = try IngestReply.decode(
            try daemon.ingestRaw([
                EventBatchCodec.encode([
                    events.make(Self.group("nx-ok")),
                    events.make(.messageSent(conversation: "nx-ok", message: "m-1", sender: "a", isSystem: false)),
                ])
            ])
        )
        #expect(valid == IngestReply(results: [.accepted(held: false), .accepted(held: false)]))
        #expect(try await daemon.status("nx-ok", "m-1", viewer: Viewer(user: "a")).status.status == .notDelivered)

        // Nothing of a refused frame was applied: no repaired conversation, no "nx-fine".
        for conversation in ["nx-\u{FFFD}", "nx-fine", "nx-source"] {
            let error = await #expect(throws: ReceiptsClientError.self, "\(conversation) must not exist") {
                try await daemon.client.snapshot(of: conversation)
            }
            #expect(error?.code == .notFound, "\(conversation): \(String(describing: error))")
        }
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "invalid_argument") == 6)
    }

    /// A length-delimited protobuf field (wire type 2) of fewer than 128 bytes: how a test
    /// writes an id no Swift string reaches the wire with (C strings end at a NUL).
    private static func field(_ number: UInt8, _ bytes: [UInt8]) -> [UInt8] {
        precondition(bytes.count < 128, "one length byte")
        return [number << 3 | 2, UInt8(bytes.count)] + bytes
    }

    /// An EventBatch of one group `conversation_upserted` of `conversation` with `members`, from
    /// source `gw-nul`, as raw protobuf bytes.
    private static func upsertFrame(sequence: UInt8, conversation: [UInt8], members: [[UInt8]]) -> [UInt8] {
        let id = field(1, Array("gw-nul".utf8)) + [2 << 3, sequence]
        let upserted = field(1, conversation) + [2 << 3, 2] + members.flatMap { field(3, $0) }
        return field(1, field(1, id) + field(10, upserted))
    }

    @Test("Ids that differ after a NUL byte are refused naming the field; they never become one id")
    func idsHoldingANULAreRefused() async throws {
        let daemon = try await ReceiptdProcess()
        // "a\0b" and "a\0c": valid UTF-8 that a Go or Python gateway can send, both "a" as C strings.
        for (sequence, last, members) in [(UInt8(1), UInt8(0x62), ["x", "y"]), (2, 0x63, ["z", "w"])] {
            let frame = Self.upsertFrame(
                sequence: sequence,
                conversation: [0x61, 0x00, last],
                members: members.map { Array($0.utf8) }
            )
            Self.expectRefused(
                try IngestReply.decode(try daemon.ingestRaw([frame])),
                "event 0: conversation_id holds a NUL byte"
            )
        }
        let member = Self.upsertFrame(
            sequence: 3,
            conversation: Array("nul-ok".utf8),
            members: [[0x78], [0x79, 0x00]]
        )
        Self.expectRefused(
            try IngestReply.decode(try daemon.ingestRaw([member])),
            "event 0: member_ids[1] holds a NUL byte"
        )
        // Nothing was applied: neither the cut id "a" nor "nul-ok".
        for conversation in ["a", "nul-ok"] {
            let error = await #expect(throws: ReceiptsClientError.self, "\(conversation) must not exist") {
                try await daemon.client.snapshot(of: conversation)
            }
            #expect(error?.code == .notFound, "\(conversation): \(String(describing: error))")
        }
        #expect(try await daemon.counter("receiptd.frames.invalid", label: "invalid_argument") == 3)

        // Once "a" exists, a query for "a\0b" is refused, not answered with "a".
        var events = EventFactory()
        _ = try await daemon.ingest([events.make(Self.group("a"))])
        let requester = try ZMQSocket(context: daemon.context, type: .req)
        defer { requester.close() }
        try requester.setReceiveTimeout(milliseconds: 5000)
        try requester.connect(daemon.queryEndpoint)
        _ = try requester.send([Self.field(5, Self.field(1, [0x61, 0x00, 0x62]))])
        let reply = try QueryReply.decode(try #require(try requester.receiveMultipart()?.last))
        #expect(reply == .error(ErrorReply(code: .invalidArgument, message: "query: conversation_id holds a NUL byte")))
    }

    @Test("A query whose ids are not UTF-8 is refused naming the field")
    func invalidUTF8QueryIsRefused() async throws {
        let daemon = try await ReceiptdProcess()
        // A raw socket: it tests the wire contract itself (bytes no Swift client can send).
        let requester = try ZMQSocket(context: daemon.context, type: .req)
        defer { requester.close() }
        try requester.setReceiveTimeout(milliseconds: 5000)
        try requester.connect(daemon.queryEndpoint)
        let queries: [(Query, String, String)] = [
            (.snapshot(conversation: "nx-\u{7F}", limit: 0), "nx-", "conversation_id"),
            (.unreadCounts(user: "u", conversations: ["c", "nx-\u{7F}"]), "nx-", "conversation_ids[1]"),
            (
                .messageStatus(
                    conversation: "c",
                    message: "m",
                    viewer: Viewer(user: "v", timeZone: "Europe/Par\u{7F}")
                ),
                "Europe/Par",
                "viewer.time_zone"
            ),
        ]
        for (query, prefix, field) in queries {
            let frame = try Self.replacing(
                Array("\(prefix)\u{7F}".utf8),
                with: Array(prefix.utf8) + [0xFF],
                in: query.encode()
            )
            _ = try requester.send([frame])
            let reply = try QueryReply.decode(try #require(try requester.receiveMultipart()?.last))
            #expect(reply == .error(ErrorReply(code: .invalidArgument, message: "query: \(field) is not valid UTF-8")))
        }
    }

    @Test("A conversation_upserted whose kind is not direct or group is rejected as INVALID_EVENT naming the field")
    func conversationKindNotDirectOrGroupIsInvalidEvent() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        // The kind field written explicitly (a proto3 encoder may): 0 is UNSPECIFIED, 7 is from a newer gateway.
        for kind: UInt8 in [0, 7] {
            let conversation = "kind-\(kind)"
            let encoded = EventBatchCodec.encode([
                events.make(.conversationUpserted(conversation: conversation, kind: .direct, members: ["a", "b"]))
            ])
            // conversation_id's bytes, then field 2 (kind) as a varint: DIRECT is 1.
            let placeholder = Array(conversation.utf8) + [0x10, 0x01]
            let frame = try Self.replacing(placeholder, with: Array(conversation.utf8) + [0x10, kind], in: encoded)
            let reply = try IngestReply.decode(try daemon.ingestRaw([frame]))
            #expect(reply.error == nil)
            guard reply.results.count == 1, case .rejected(let rejection) = reply.results[0] else {
                Issue.record("kind \(kind): expected one rejection, got \(reply)")
                continue
            }
            #expect(rejection.reason == .invalidEvent, "kind \(kind): \(rejection)")
            #expect(rejection.detail.contains("conversation_upserted.kind"), "kind \(kind): \(rejection.detail)")
        }
    }

    @Test("A viewer's unknown time zone or locale is INVALID_ARGUMENT naming it; empty ones are the defaults")
    func unknownTimeZoneOrLocaleIsInvalidArgument() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        _ = try await daemon.ingest([
            events.make(.conversationUpserted(conversation: "tz", kind: .direct, members: ["a", "b"])),
            events.make(.messageSent(conversation: "tz", message: "m1", sender: "a", isSystem: false)),
            events.make(.read(conversation: "tz", user: "b", message: "m1")),
        ])
        for (viewer, named) in [
            (Viewer(user: "a", timeZone: "Not/AZone"), "\"Not/AZone\""),
            (Viewer(user: "a", locale: "xx_INVALID"), "\"xx_INVALID\""),
            (Viewer(user: "a", timeZone: "Europe/Paris", locale: "xx_INVALID"), "\"xx_INVALID\""),
        ] {
            let error = await #expect(throws: ReceiptsClientError.self, "\(viewer)") {
                try await daemon.status("tz", "m1", viewer: viewer)
            }
            #expect(error?.code == .invalidArgument, "\(viewer): \(String(describing: error))")
            #expect(error?.message.contains(named) == true, "\(viewer): \(String(describing: error))")
            let lastSent = await #expect(throws: ReceiptsClientError.self, "\(viewer)") {
                try await daemon.client.lastSent(in: "tz", viewer: viewer)
            }
            #expect(lastSent?.code == .invalidArgument, "\(viewer): \(String(describing: lastSent))")
        }
        let known = try await daemon.status(
            "tz",
            "m1",
            viewer: Viewer(user: "a", timeZone: "Europe/Paris", locale: "fr_FR")
        )
        #expect(known.displayText.hasPrefix("Read at "))
        let defaults = try await daemon.status("tz", "m1", viewer: Viewer(user: "a"))
        #expect(defaults.displayText.hasPrefix("Read at "))
    }
}
