import Foundation
import ReceiptLog
import ReceiptsCore
import Testing

@testable import ReceiptsFuzzing

/// Each crash the fuzzers found, as the input that showed it, with what it taught.
struct RegressionTests {
    /// A one-message conversation's snapshot (of version 3, as when the fuzzer found the
    /// crash) with its first and last sequence replaced.
    static func snapshot(base: UInt32, lastSequence: UInt32) -> [UInt8] {
        var engine = ReceiptEngine()
        _ = engine.apply(
            Event(
                id: EventID(source: "s", sequence: 1),
                kind: .conversationUpserted(conversation: "c", kind: .group, members: ["a", "b"])
            ),
            at: Timestamp(milliseconds: 1)
        )
        _ = engine.apply(
            Event(
                id: EventID(source: "s", sequence: 2),
                kind: .messageSent(conversation: "c", message: "m", sender: "a", isSystem: false)
            ),
            at: Timestamp(milliseconds: 2)
        )
        var body = Array(engine.encodedState(version: 3).dropFirst(10).dropLast(8))
        // The conversation's id "c" (length-prefixed), its kind, then base 1 and last sequence 1.
        let pattern: [UInt8] = [1, 0, 0, 0, 0x63, 2, 1, 0, 0, 0, 1, 0, 0, 0]
        let at = body.indices.first { body[$0...].starts(with: pattern) }!
        withUnsafeBytes(of: base.littleEndian) { body.replaceSubrange((at + 6)..<(at + 10), with: $0) }
        withUnsafeBytes(of: lastSequence.littleEndian) { body.replaceSubrange((at + 10)..<(at + 14), with: $0) }
        return ReceiptEngine.sealedSnapshot(body: body, version: 3)
    }

    /// Found by the snapshot target: a restored conversation whose last sequence was
    /// `UInt32.max` trapped on overflow when retention dropped its messages (`base` passed it).
    /// The corpus holds the input (raw framing), so the snapshot target replays it too.
    @Test func aSnapshotWithTheLastPossibleSequenceIsRefused() throws {
        let committed = try Data(
            contentsOf: CorpusTests.corpus.appendingPathComponent("snapshot/regression-last-sequence-max")
        )
        #expect([UInt8](committed) == [1] + Self.snapshot(base: .max, lastSequence: .max))
        #expect(throws: SnapshotDecodingError.self) {
            try ReceiptEngine(restoringFrom: Self.snapshot(base: .max, lastSequence: .max), configuration: .init())
        }
    }

    @Test func aConversationAtTheSequenceLimitExpiresAndRefusesNewMessages() throws {
        let limit = UInt32.max - 1
        var engine = try ReceiptEngine(
            restoringFrom: Self.snapshot(base: limit, lastSequence: limit),
            configuration: .init()
        )
        #expect(engine.status(conversation: "c", message: "m")?.sequence == UInt64(limit))
        #expect(engine.expireMessages(sentBefore: Timestamp(milliseconds: 10)) == 1)
        let result = engine.apply(
            Event(
                id: EventID(source: "s", sequence: 3),
                kind: .messageSent(conversation: "c", message: "n", sender: "a", isSystem: false)
            ),
            at: Timestamp(milliseconds: 20)
        )
        guard case .rejected(let rejection) = result.outcome else {
            Issue.record("a message past the sequence limit was \(result.outcome)")
            return
        }
        #expect(rejection.reason == .invalidEvent)
        #expect(
            try ReceiptEngine(restoringFrom: engine.encodedState(), configuration: .init()).encodedState()
                == engine.encodedState()
        )
    }

    /// Found by the segment target (a false alarm of the target, not a scanner bug): a record's
    /// length is not under its checksum, and a payload of four 0xFF bytes then zeros keeps its
    /// crc32 whatever the number of zeros. A length flipped from 13 to 12 over such a payload
    /// leaves a valid 12-byte record and one stray zero byte, which the scan reports as damage.
    @Test func aFlippedLengthOverTrailingZerosCanStillCheckOut() throws {
        let input = [UInt8](
            try Data(contentsOf: CorpusTests.corpus.appendingPathComponent("segment/regression-length-flip-keeps-crc"))
        )
        #expect(throws: Never.self) { try FuzzTarget.segment.run(input) }
        let records = Array(input.dropFirst().dropLast(4))
        var (segment, _) = SegmentTarget.built(from: records)
        segment[RecordFormat.segmentHeaderSize] ^= 1
        let scan = segment.withUnsafeBytes { SegmentScan($0, start: SegmentTarget.start) }
        #expect(scan.records == 1)
        #expect(scan.validEnd == segment.count - 1)
    }
}
