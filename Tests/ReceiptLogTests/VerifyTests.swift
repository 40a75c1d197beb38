import Foundation
import Testing

@testable import ReceiptLog

struct VerifyTests {
    @Test func cleanLogIsReportedCleanWithItsCounts() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 500 }
        let ends = try (0..<100).map { try log.append($0) }
        _ = try log.log.writeSnapshot([1, 2, 3], covering: ends[59])
        try log.log.close()
        let before = try fixture.contents()

        let report = try ReceiptLog.verify(directory: fixture.directory)
        #expect(report.isClean)
        #expect(report.problem == nil)
        #expect(report.segments == (try fixture.segments().count))
        #expect(report.records == 100)
        #expect(report.bytes == (try fixture.segments().reduce(0) { $0 + UInt64(try fixture.read($1).count) }))
        #expect(report.snapshots.map(\.position) == [ends[59]])
        #expect(report.snapshots.allSatisfy { $0.isValid })
        #expect(report.recoverySnapshot == ends[59])
        #expect(report.recordsToReplay == 40)
        #expect(report.endPosition == ends[99])
        #expect(try fixture.contents() == before)
    }

    enum Damage: CaseIterable {
        case tornTail, garbageTail, flippedLastRecord, midLogFlip, corruptSnapshot, leftoverTemporary
    }

    @Test(arguments: Damage.allCases)
    func verifyReportsWhatOpeningWouldDoAndChangesNothing(damage: Damage) throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 300 }
        let ends = try (0..<40).map { try log.append($0) }
        _ = try log.log.writeSnapshot([1], covering: ends[5])
        _ = try log.log.writeSnapshot([2], covering: ends[10])
        try log.log.close()
        let segments = try fixture.segments()
        let last = segments.last!
        switch damage {
        case .tornTail:
            let bytes = try fixture.read(last)
            try fixture.write(last, Array(bytes.dropLast(3)))
        case .garbageTail:
            try fixture.write(
                last,
                try fixture.read(last) + [0xFF, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09]
            )
        case .flippedLastRecord:
            var bytes = try fixture.read(last)
            bytes[bytes.count - 2] ^= 0x01
            try fixture.write(last, bytes)
        case .midLogFlip:
            var bytes = try fixture.read(segments[segments.count - 2])
            bytes[RecordFormat.segmentHeaderSize + 9] ^= 0x01
            try fixture.write(segments[segments.count - 2], bytes)
        case .corruptSnapshot:
            let newest = try fixture.snapshots().last!
            var bytes = try fixture.read(newest)
            bytes[bytes.count - 1] ^= 0x01
            try fixture.write(newest, bytes)
        case .leftoverTemporary:
            try fixture.write("snapshot-00000000000000000001.snap.tmp", [1, 2])
        }
        let before = try fixture.contents()
        let report = try ReceiptLog.verify(directory: fixture.directory)
        #expect(try fixture.contents() == before)
        #expect(!report.isClean)

        do {
            let opened = try fixture.open()
            defer { try? opened.log.close() }
            #expect(report.problem == opened.log.recovery.damage)
            #expect(report.problem?.isTruncatableTail ?? true)
            #expect(report.recoverySnapshot == opened.log.recovery.snapshotPosition)
            #expect(report.recordsToReplay == opened.log.recovery.recordsToReplay)
            let replayed = try opened.replayAll()
            #expect(report.recordsToReplay == replayed.count)
            #expect(report.endPosition == opened.log.recovery.endPosition)
            #expect(report.temporaryFiles == opened.log.recovery.removedTemporaryFiles)
            #expect(
                report.snapshots.filter { !$0.isValid }.map(\.file) == opened.log.recovery.invalidSnapshots
            )
        } catch let error as LogError {
            #expect(report.problem?.isTruncatableTail == false)
            #expect(error.file == report.problem.map { fixture.path($0.file) })
            #expect(error.offset == report.problem?.offset)
        }
    }

    @Test func missingDirectoryIsAnIOError() throws {
        let fixture = try LogFixture()
        let error = #expect(throws: LogError.self) { try ReceiptLog.verify(directory: fixture.directory) }
        #expect(error?.code == .io)
    }

    @Test func verifyOfARunningLogSeesItsDurableRecords() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        defer { try? log.log.close() }
        let ends = try (0..<50).map { try log.append($0) }
        try log.log.flush()
        let report = try ReceiptLog.verify(directory: fixture.directory)
        #expect(report.records == 50)
        #expect(report.endPosition == ends.last)
    }
}
