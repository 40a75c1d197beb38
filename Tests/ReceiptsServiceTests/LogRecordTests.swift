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
        (UInt8(9), [UInt8](repeating: 0, count: 8), "unknown type 9"),
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
