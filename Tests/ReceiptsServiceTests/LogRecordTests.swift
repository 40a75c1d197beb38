import Foundation
import ReceiptsCore
import ReceiptsService
import Testing

struct LogRecordTests {
    static let time = Timestamp(milliseconds: 1_750_000_000_123)

    /// Reads `record`'s stored form back and hands the result to `check` while the payload lives.
    static func readBack(_ record: LogRecord, _ check: (LogRecord) -> Void) throws {
        let payload = record.payload()
        try payload.withUnsafeBytes { check(try LogRecord(type: record.kind.rawValue, payload: $0)) }
    }

    @Test(arguments: [true, false])
    func batchesKeepTheirTimeFrameAndEndpoint(acknowledged: Bool) throws {
        let frame: [UInt8] = [0x0A, 0x03, 1, 2, 3]
        try frame.withUnsafeBytes { frame in
            let record: LogRecord =
                acknowledged
                ? .acknowledgedBatch(time: Self.time, frame: frame)
                : .unacknowledgedBatch(time: Self.time, frame: frame)
            try Self.readBack(record) { read in
                switch read {
                case .acknowledgedBatch(let time, let bytes) where acknowledged,
                    .unacknowledgedBatch(let time, let bytes) where !acknowledged:
                    #expect(time == Self.time)
                    #expect(Array(bytes) == Array(frame))
                default:
                    Issue.record("read back as \(read)")
                }
            }
        }
    }

    @Test func anEmptyFrameIsABatchOfNothing() throws {
        try Self.readBack(.acknowledgedBatch(time: Self.time, frame: UnsafeRawBufferPointer(start: nil, count: 0))) {
            guard case .acknowledgedBatch(_, let frame) = $0 else {
                Issue.record("read back as \($0)")
                return
            }
            #expect(frame.isEmpty)
        }
    }

    @Test func retentionKeepsItsCutoff() throws {
        try Self.readBack(.retention(cutoff: Self.time)) {
            guard case .retention(let cutoff) = $0 else {
                Issue.record("read back as \($0)")
                return
            }
            #expect(cutoff == Self.time)
        }
    }

    @Test func theTypesAreTheOnesOnDisk() {
        // Logs written by earlier builds hold these numbers; they never change.
        #expect(LogRecord.Kind.acknowledgedBatch.rawValue == 1)
        #expect(LogRecord.Kind.unacknowledgedBatch.rawValue == 2)
        #expect(LogRecord.Kind.retention.rawValue == 3)
        #expect(LogRecord.Kind.moveSteps.map(\.rawValue) == [4, 5, 6, 7, 8])
        #expect(LogRecord.Kind.termStarted.rawValue == 9)
    }

    @Test(arguments: ["receiptd-b-3", "", "r\u{e9}ceiptd-0"])
    func aTermRecordKeepsItsTermsAndMember(member: String) throws {
        try Self.readBack(.termStarted(term: 7, previousTerm: 5, member: member)) {
            guard case .termStarted(let term, let previousTerm, let read) = $0 else {
                Issue.record("read back as \($0)")
                return
            }
            #expect(term == 7 && previousTerm == 5 && read == member)
        }
    }

    @Test func aTermRecordIsLaidOutAsTheDesignSays() {
        // deploy/REPLICATION.md, section 7.1: term u64 | previous term u64 | member (u16 length, UTF-8).
        let payload = LogRecord.termStarted(term: 0x0102, previousTerm: 3, member: "ab").payload()
        #expect(payload == [2, 1, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0x61, 0x62])
    }

    @Test func theFuzzSeedsTermRecordIsOne() throws {
        // Corpus/segment/seed-term-record: shape 2, then records as (length, type, payload); the
        // last one is the term record (SeedCorpus.termRecordPayload).
        let seed = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../ReceiptsFuzzingTests/Corpus/segment/seed-term-record")
        var bytes = [UInt8](try Data(contentsOf: seed)).dropFirst()
        var last: (type: UInt8, payload: [UInt8])?
        while bytes.count >= 2 {
            let length = Int(bytes[bytes.startIndex])
            last = (bytes[bytes.startIndex + 1], Array(bytes.dropFirst(2).prefix(length)))
            bytes = bytes.dropFirst(2 + length)
        }
        let record = try #require(last)
        try record.payload.withUnsafeBytes { payload in
            let read = try LogRecord(type: record.type, payload: payload)
            guard case .termStarted(2, 1, "receiptd-b-3") = read else {
                Issue.record("read as \(read)")
                return
            }
        }
    }

    @Test func moveStepsKeepEveryField() throws {
        let state: [UInt8] = [1, 2, 3, 250]
        try state.withUnsafeBytes { state in
            let records: [LogRecord] = [
                .movePrepared(epoch: 7, from: 2, to: 3),
                .moveFrozen(epoch: 7, destination: 2, conversations: ["c1", "", "c\u{e9}"]),
                .moveImported(time: Self.time, epoch: 7, sender: 1, last: true, state: state),
                .moveReleased(epoch: 7, destination: 2, conversations: ["c1"]),
                .moveCommitted(epoch: 7),
            ]
            for record in records {
                try Self.readBack(record) { read in
                    switch (record, read) {
                    case (
                        .moveImported(let t1, let e1, let s1, let l1, let b1),
                        .moveImported(let t2, let e2, let s2, let l2, let b2)
                    ):
                        #expect(t1 == t2 && e1 == e2 && s1 == s2 && l1 == l2 && Array(b1) == Array(b2))
                    default:
                        #expect("\(read)" == "\(record)")
                    }
                }
            }
        }
    }

    @Test(arguments: [
        (UInt8(1), [UInt8](repeating: 0, count: 7), "too short for its time"),
        (UInt8(2), [], "too short for its time"),
        (UInt8(3), [UInt8](repeating: 0, count: 9), "is not one cutoff"),
        (UInt8(3), [UInt8](repeating: 0, count: 7), "is not one cutoff"),
        (UInt8(4), [UInt8](repeating: 0, count: 8), "too short"),
        (UInt8(5), [UInt8](repeating: 0, count: 13), "too short"),
        (UInt8(8), [UInt8](repeating: 0, count: 9), "1 bytes too many"),
        (UInt8(9), [UInt8](repeating: 0, count: 17), "a term-started record of 17 bytes is too short"),
        (UInt8(9), [UInt8](repeating: 0, count: 19), "1 bytes too many"),
        (UInt8(9), [UInt8](repeating: 0, count: 16) + [3, 0, 0x61, 0x62], "too short"),
        (UInt8(10), [UInt8](repeating: 0, count: 8), "unknown type 10"),
        (UInt8(0), [], "unknown type 0"),
    ])
    func aDamagedRecordIsRefusedWithItsReason(type: UInt8, payload: [UInt8], reason: String) {
        payload.withUnsafeBytes { payload in
            do {
                let record = try LogRecord(type: type, payload: payload)
                Issue.record("read as \(record)")
            } catch {
                #expect("\(error)".contains(reason))
            }
        }
    }
}
