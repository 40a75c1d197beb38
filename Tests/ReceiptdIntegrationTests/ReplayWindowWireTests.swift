import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// An event id below its source's anti-replay window (4096 sequences), sent as a C, Go or
/// Python gateway may: answered REJECTED with REJECT_REASON_OUTSIDE_REPLAY_WINDOW ("cannot
/// tell whether it was applied"), never DUPLICATE ("applied before"), never applied, and
/// answered the same after a restart that replays the log.
///
/// The frames are protobuf bytes written here field by field and the replies are read the same
/// way, as a gateway with its own protobuf library sees them: the numbers are the contract.
@Suite(.serialized, .startsProcesses)
struct ReplayWindowWireTests {
    /// Just enough of the protobuf encoding (varints and length-delimited fields) to write
    /// event batches and read ingest replies without receiptd's own codec.
    private enum Proto {
        static func varint(_ value: UInt64) -> [UInt8] {
            var value = value
            var bytes: [UInt8] = []
            while value >= 0x80 {
                bytes.append(UInt8(value & 0x7f) | 0x80)
                value >>= 7
            }
            return bytes + [UInt8(value)]
        }

        static func field(_ number: UInt64, varint value: UInt64) -> [UInt8] {
            varint(number << 3) + varint(value)
        }

        static func field(_ number: UInt64, bytes value: [UInt8]) -> [UInt8] {
            varint(number << 3 | 2) + varint(UInt64(value.count)) + value
        }

        static func field(_ number: UInt64, _ value: String) -> [UInt8] {
            field(number, bytes: Array(value.utf8))
        }

        /// The fields of a message, in order: each with its number and its value (a varint's, or
        /// 0) or its bytes (a length-delimited field's, or empty).
        static func fields(_ bytes: [UInt8]) throws -> [(number: UInt64, value: UInt64, bytes: [UInt8])] {
            var fields: [(number: UInt64, value: UInt64, bytes: [UInt8])] = []
            var at = 0
            func readVarint() throws -> UInt64 {
                var value: UInt64 = 0
                var shift: UInt64 = 0
                while at < bytes.count, shift < 64 {
                    let byte = bytes[at]
                    at += 1
                    value |= UInt64(byte & 0x7f) << shift
                    if byte < 0x80 { return value }
                    shift += 7
                }
                throw IntegrationError("a truncated varint in a reply")
            }
            while at < bytes.count {
                let key = try readVarint()
                switch key & 7 {
                case 0:
                    fields.append((key >> 3, try readVarint(), []))
                case 2:
                    let count = Int(try readVarint())
                    guard count <= bytes.count - at else { throw IntegrationError("a truncated field in a reply") }
                    fields.append((key >> 3, 0, Array(bytes[at..<at + count])))
                    at += count
                default:
                    throw IntegrationError("wire type \(key & 7) in a reply")
                }
            }
            return fields
        }
    }

    /// One event: EventId (field 1), then its kind at `kindField` with `body`.
    private static func event(_ sequence: UInt64, kindField: UInt64, _ body: [UInt8]) -> [UInt8] {
        let id = Proto.field(1, source) + Proto.field(2, varint: sequence)
        return Proto.field(1, bytes: id) + Proto.field(kindField, bytes: body)
    }

    /// An EventBatch body: each event as field 1.
    private static func batch(_ events: [[UInt8]]) -> [UInt8] {
        events.flatMap { Proto.field(1, bytes: $0) }
    }

    private static let source = "c-gateway"
    private static let conversation = "window-1"

    private static func upsert(_ sequence: UInt64) -> [UInt8] {
        // ConversationUpserted (10): group (kind 2) of a and b.
        event(
            sequence,
            kindField: 10,
            Proto.field(1, conversation) + Proto.field(2, varint: 2) + Proto.field(3, "a") + Proto.field(3, "b")
        )
    }

    private static func join(_ sequence: UInt64, _ user: String) -> [UInt8] {
        event(sequence, kindField: 11, Proto.field(1, conversation) + Proto.field(2, user))
    }

    private static func message(_ sequence: UInt64, _ message: String) -> [UInt8] {
        event(sequence, kindField: 13, Proto.field(1, conversation) + Proto.field(2, message) + Proto.field(3, "a"))
    }

    private static func read(_ sequence: UInt64, _ user: String, _ message: String) -> [UInt8] {
        event(sequence, kindField: 15, Proto.field(1, conversation) + Proto.field(2, user) + Proto.field(3, message))
    }

    /// One EventResult as a gateway reads it: the numbers of outcome and reason, and the detail.
    private struct Result: CustomStringConvertible {
        var outcome: UInt64 = 0
        var reason: UInt64 = 0
        var detail = ""

        var description: String { "outcome \(outcome) reason \(reason) \"\(detail)\"" }

        static let accepted = (outcome: UInt64(1), reason: UInt64(0))
        static let duplicate = (outcome: UInt64(2), reason: UInt64(0))
        static let outsideWindow = (outcome: UInt64(3), reason: UInt64(13))
    }

    /// Sends one frame and reads the results of its reply.
    private static func exchange(_ daemon: ReceiptdProcess, _ events: [[UInt8]]) throws -> [Result] {
        let body = try daemon.ingestRaw([batch(events)])
        let reply = try Proto.fields(body)
        guard !reply.contains(where: { $0.number == 2 }) else {
            throw IntegrationError("the frame was refused: \(try IngestReply.decode(body))")
        }
        return try reply.filter { $0.number == 1 }.map { entry in
            var result = Result()
            for field in try Proto.fields(entry.bytes) {
                switch field.number {
                case 1: result.outcome = field.value
                case 2: result.reason = field.value
                case 3: result.detail = String(decoding: field.bytes, as: UTF8.self)
                default: break
                }
            }
            return result
        }
    }

    /// Checks a frame's results against (outcome, reason) numbers.
    private static func expect(
        _ results: [Result],
        _ expected: [(outcome: UInt64, reason: UInt64)],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(results.count == expected.count, "\(results)", sourceLocation: sourceLocation)
        for (result, expected) in zip(results, expected) {
            #expect(
                result.outcome == expected.outcome && result.reason == expected.reason,
                "\(result), expected outcome \(expected.outcome) reason \(expected.reason)",
                sourceLocation: sourceLocation
            )
        }
    }

    @Test func anIDBelowTheWindowIsAnsweredAsSuchNotAsADuplicate() async throws {
        let daemon = try await ReceiptdProcess()
        // The group, and a message 4999 sequences later: the window (4096) now starts at 905.
        Self.expect(
            try Self.exchange(daemon, [Self.upsert(1), Self.message(5000, "m1")]),
            [Result.accepted, Result.accepted]
        )

        let results = try Self.exchange(
            daemon,
            [
                Self.join(2, "c"),  // never seen, below the window
                Self.upsert(1),  // seen, but below the window: cannot be told apart either
                Self.read(4999, "b", "m1"),  // never seen, inside the window: applied
                Self.message(5000, "m1"),  // seen, inside the window
            ]
        )
        Self.expect(results, [Result.outsideWindow, Result.outsideWindow, Result.accepted, Result.duplicate])
        if let first = results.first {
            #expect(first.detail.contains("\(Self.source)#2"), "\(first.detail)")
            #expect(first.detail.contains("cannot tell whether it was applied"), "\(first.detail)")
        }
        #expect(try await daemon.counter("receiptd.events.rejected", label: "outside_replay_window") == 2)

        // A Swift caller of `send` sees a rejection with the reason, never a success.
        let outcomes = try await daemon.ingest([
            Event(
                id: EventID(source: Self.source, sequence: 3),
                kind: .memberJoined(conversation: Self.conversation, user: "c")
            )
        ])
        if case .rejected(let rejection)? = outcomes.first {
            #expect(rejection.reason == .outsideReplayWindow)
        } else {
            Issue.record("the client answered \(outcomes)")
        }

        // c never joined: a new message has one recipient, b.
        Self.expect(try Self.exchange(daemon, [Self.message(5001, "m2")]), [Result.accepted])
        #expect(try await daemon.status(Self.conversation, "m2", viewer: Viewer(user: "a")).status.recipientCount == 1)

        // Replaying the log after a crash decides each id as it was decided live; so does a
        // snapshot (it keeps the windows) and the log after it.
        daemon.kill9()
        try await daemon.start()
        Self.expect(
            try Self.exchange(daemon, [Self.join(2, "c"), Self.message(5001, "m2"), Self.message(5002, "m3")]),
            [Result.outsideWindow, Result.duplicate, Result.accepted]
        )
        #expect(try await daemon.status(Self.conversation, "m3", viewer: Viewer(user: "a")).status.recipientCount == 1)
        _ = try await daemon.client.compact(worker: 0)
        Self.expect(
            try Self.exchange(daemon, [Self.join(4, "c"), Self.message(5003, "m4")]),
            [Result.outsideWindow, Result.accepted]
        )
        daemon.kill9()
        try await daemon.start()
        Self.expect(
            try Self.exchange(daemon, [Self.join(4, "c"), Self.message(5003, "m4"), Self.message(5004, "m5")]),
            [Result.outsideWindow, Result.duplicate, Result.accepted]
        )
        #expect(try await daemon.status(Self.conversation, "m5", viewer: Viewer(user: "a")).status.recipientCount == 1)
    }
}
