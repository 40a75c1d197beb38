import Foundation
import ReceiptsWire
import Testing

/// Just enough of the protobuf encoding (varints and length-delimited fields) to write frames
/// and read replies and updates without receiptd's own codec, as a gateway with its own
/// protobuf library sees them: the field numbers are the contract.
enum RawProto {
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

    /// One `Event`: its `EventId` (field 1), then its kind at `kindField` with `body`.
    static func event(source: String, sequence: UInt64, kindField: UInt64, _ body: [UInt8]) -> [UInt8] {
        let id = field(1, source) + field(2, varint: sequence)
        return field(1, bytes: id) + field(kindField, bytes: body)
    }

    /// A `ConversationUpserted` (event kind 10) body: a group (kind 2) of `members`.
    static func groupUpserted(_ conversation: String, members: [String]) -> [UInt8] {
        field(1, conversation) + field(2, varint: 2) + members.flatMap { field(3, $0) }
    }

    /// An `EventBatch` body: each event as field 1.
    static func batch(_ events: [[UInt8]]) -> [UInt8] {
        events.flatMap { field(1, bytes: $0) }
    }
}

/// One `EventResult` as a gateway reads it: the numbers of outcome and reason, and the detail.
struct RawEventResult: CustomStringConvertible {
    var outcome: UInt64 = 0
    var reason: UInt64 = 0
    var detail = ""

    var description: String { "outcome \(outcome) reason \(reason) \"\(detail)\"" }

    static let accepted = (outcome: UInt64(1), reason: UInt64(0))
    static let duplicate = (outcome: UInt64(2), reason: UInt64(0))
    static let invalidEvent = (outcome: UInt64(3), reason: UInt64(2))
    static let outsideWindow = (outcome: UInt64(3), reason: UInt64(13))

    /// Sends one frame of `events` and reads the results of its reply.
    /// - Throws: `IntegrationError` when the frame is refused whole.
    static func exchange(_ daemon: ReceiptdProcess, _ events: [[UInt8]]) throws -> [RawEventResult] {
        let body = try daemon.ingestRaw([RawProto.batch(events)])
        let reply = try RawProto.fields(body)
        guard !reply.contains(where: { $0.number == 2 }) else {
            throw IntegrationError("the frame was refused: \(try IngestReply.decode(body))")
        }
        return try reply.filter { $0.number == 1 }.map { entry in
            var result = RawEventResult()
            for field in try RawProto.fields(entry.bytes) {
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
    static func expect(
        _ results: [RawEventResult],
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
}
