import Foundation
import Testing

@testable import ReceiptLog

struct SnapshotTests {
    static func state(_ round: Int) -> [UInt8] {
        Array("state after round \(round)".utf8)
    }

    @Test func snapshotThenReopenReplaysOnlyLaterRecords() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let ends = try (0..<150).map { try log.append($0) }
        let report = try log.log.writeSnapshot(Self.state(1), covering: ends[49])
        #expect(report.position == ends[49])
        #expect(report.snapshotBytes == UInt64(SnapshotFile.headerSize + Self.state(1).count))
        #expect(log.log.bytesSinceSnapshot == ends[149].offset - ends[49].offset)
        try log.log.close()

        let reopened = try fixture.open()
        defer { try? reopened.log.close() }
        #expect(reopened.log.latestSnapshot?.position == ends[49])
        #expect(reopened.log.latestSnapshot?.payload == Self.state(1))
        #expect(reopened.log.recovery.snapshotPosition == ends[49])
        #expect(reopened.log.recovery.recordsToReplay == 100)
        #expect(try reopened.replayAll() == (50..<150).map { Replayed.fixture($0, end: ends[$0]) })
    }

    /// Four rounds of appends, each closed by a snapshot, in small segments.
    struct Rounds {
        let fixture: LogFixture
        var ends: [LogPosition] = []
        var snapshots: [LogPosition] = []
        var reports: [CompactionReport] = []

        init() throws {
            self.fixture = try LogFixture()
            let log = try self.fixture.open { $0.segmentSize = 400 }
            for round in 0..<4 {
                for index in (round * 40)..<(round * 40 + 40) { self.ends.append(try log.append(index)) }
                self.reports.append(try log.log.writeSnapshot(SnapshotTests.state(round), covering: self.ends.last!))
                self.snapshots.append(self.ends.last!)
            }
            self.ends.append(try log.append(1_000))
            try log.log.close()
        }

        func records(after position: LogPosition) -> [Replayed] {
            (0..<160).filter { self.ends[$0] > position }.map { Replayed.fixture($0, end: self.ends[$0]) }
                + [Replayed.fixture(1_000, end: self.ends[160])]
        }
    }

    @Test func keepsTwoGenerationsAndDeletesWhatThePreviousOneCovers() throws {
        let rounds = try Rounds()
        #expect(rounds.reports[0].segmentsRemoved == 0)
        #expect(rounds.reports.map(\.segmentsRemoved).reduce(0, +) > 0)
        #expect(rounds.reports.map(\.snapshotsRemoved) == [0, 0, 1, 1])
        #expect(
            try rounds.fixture.snapshots()
                == rounds.snapshots.suffix(2).map { LogFileName.snapshot(position: $0.offset) }
        )
        // The oldest retained segment still holds the previous snapshot's position.
        let segments = try rounds.fixture.segments()
        guard case .segment(let firstStart) = LogFileName.parse(segments[0]) else { throw POSIXError(.EINVAL) }
        #expect(firstStart <= rounds.snapshots[2].offset)
        #expect(segments.count < 10)

        let reopened = try rounds.fixture.open()
        defer { try? reopened.log.close() }
        #expect(reopened.log.latestSnapshot?.payload == Self.state(3))
        #expect(try reopened.replayAll() == rounds.records(after: rounds.snapshots[3]))
    }

    @Test func losingTheNewestSnapshotRecoversFromTheOlderOne() throws {
        let rounds = try Rounds()
        try FileManager.default.removeItem(
            atPath: rounds.fixture.path(LogFileName.snapshot(position: rounds.snapshots[3].offset))
        )
        let reopened = try rounds.fixture.open()
        defer { try? reopened.log.close() }
        #expect(reopened.log.latestSnapshot?.position == rounds.snapshots[2])
        #expect(reopened.log.latestSnapshot?.payload == Self.state(2))
        #expect(try reopened.replayAll() == rounds.records(after: rounds.snapshots[2]))
    }

    @Test(arguments: [0, 20, 40])
    func corruptNewestSnapshotFallsBackAndIsReported(byte: Int) throws {
        let rounds = try Rounds()
        let newest = LogFileName.snapshot(position: rounds.snapshots[3].offset)
        var bytes = try rounds.fixture.read(newest)
        bytes[min(byte, bytes.count - 1)] ^= 0x08
        try rounds.fixture.write(newest, bytes)
        #expect(try ReceiptLog.verify(directory: rounds.fixture.directory).recoverySnapshot == rounds.snapshots[2])

        let reopened = try rounds.fixture.open()
        #expect(reopened.log.latestSnapshot?.position == rounds.snapshots[2])
        #expect(reopened.log.recovery.invalidSnapshots == [newest])
        #expect(try reopened.replayAll() == rounds.records(after: rounds.snapshots[2]))
        #expect(rounds.fixture.logs.entries.contains { $0.level == .warning && $0.message.contains("snapshot") })
        try reopened.log.close()
        #expect(try rounds.fixture.files().contains(LogFileName.quarantined(forSnapshot: newest)))
        #expect(!(try rounds.fixture.snapshots().contains(newest)))
        #expect(try ReceiptLog.verify(directory: rounds.fixture.directory).isClean)
    }

    @Test func openingChecksOnlyTheSnapshotItStartsFrom() throws {
        let rounds = try Rounds()
        let older = LogFileName.snapshot(position: rounds.snapshots[2].offset)
        var bytes = try rounds.fixture.read(older)
        bytes[bytes.count - 1] ^= 0x08
        try rounds.fixture.write(older, bytes)

        let reopened = try rounds.fixture.open()
        #expect(reopened.log.latestSnapshot?.payload == Self.state(3))
        #expect(reopened.log.recovery.invalidSnapshots.isEmpty)
        try reopened.log.close()
        #expect(try rounds.fixture.snapshots().contains(older))
        let report = try ReceiptLog.verify(directory: rounds.fixture.directory)
        #expect(report.snapshots.filter { !$0.isValid }.map(\.file) == [older])
        #expect(report.recoverySnapshot == rounds.snapshots[3])
    }

    @Test func newestSnapshotIsReadInPlaceUntilTheNextCompaction() throws {
        let rounds = try Rounds()
        let reopened = try rounds.fixture.open()
        defer { try? reopened.log.close() }
        let read = reopened.log.withLatestSnapshot { position, payload in (position, Array(payload)) }
        #expect(read?.0 == rounds.snapshots[3])
        #expect(read?.1 == Self.state(3))
        #expect(reopened.log.latestSnapshot?.payload == Self.state(3))
        _ = try reopened.log.writeSnapshot(Self.state(4), covering: rounds.ends[160])
        #expect(reopened.log.withLatestSnapshot { _, _ in true } == nil)
        #expect(reopened.log.latestSnapshot == nil)
    }

    @Test func noSnapshotReadsAsNil() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        defer { try? log.log.close() }
        #expect(log.log.withLatestSnapshot { _, _ in true } == nil)
    }

    @Test func leftoverTemporarySnapshotIsIgnoredAndRemoved() throws {
        let rounds = try Rounds()
        let leftover = LogFileName.temporary(forSnapshot: LogFileName.snapshot(position: rounds.ends[160].offset))
        try rounds.fixture.write(leftover, [0x52, 0x43, 0x50])
        #expect(try ReceiptLog.verify(directory: rounds.fixture.directory).temporaryFiles == [leftover])

        let reopened = try rounds.fixture.open()
        defer { try? reopened.log.close() }
        #expect(reopened.log.recovery.removedTemporaryFiles == [leftover])
        #expect(reopened.log.latestSnapshot?.position == rounds.snapshots[3])
        #expect(!(try rounds.fixture.files().contains(leftover)))
    }

    @Test func snapshotPositionsOutsideTheLogAreRejected() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        defer { try? log.log.close() }
        let end = try log.append(1)
        let beyond = #expect(throws: LogError.self) {
            try log.log.writeSnapshot([], covering: LogPosition(offset: end.offset + 1))
        }
        #expect(beyond?.code == .invalidArgument)
        _ = try log.log.writeSnapshot([], covering: end)
        let before = #expect(throws: LogError.self) { try log.log.writeSnapshot([], covering: .zero) }
        #expect(before?.code == .invalidArgument)
    }

    @Test func snapshotNotOnARecordBoundaryStopsStartUp() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let end = try log.append(30)
        _ = try log.append(31)
        _ = try log.log.writeSnapshot([9], covering: LogPosition(offset: end.offset - 3))
        try log.log.close()
        let error = #expect(throws: LogError.self) { try fixture.open() }
        #expect(error?.code == .invalidSnapshot)
        #expect(try ReceiptLog.verify(directory: fixture.directory).problem?.kind == .snapshotNotOnRecordBoundary)
    }

    @Test func snapshotsWhileOtherThreadsAppend() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 4096 }
        let appender = Thread {
            for index in 0..<20_000 { _ = try! log.append(index) }
        }
        _ = try log.log.writeSnapshot(Self.state(0), covering: .zero)
        appender.start()
        var last = LogPosition.zero
        var round = 1
        while !appender.isFinished {
            let position = log.log.durablePosition
            if position > last {
                _ = try log.log.writeSnapshot(Self.state(round), covering: position)
                last = position
                round += 1
            }
        }
        try log.log.flush()
        if log.log.appendedPosition > last {
            last = log.log.appendedPosition
            _ = try log.log.writeSnapshot(Self.state(round), covering: last)
        }
        try log.log.close()
        #expect(try fixture.snapshots().count == 2)

        let reopened = try fixture.open()
        defer { try? reopened.log.close() }
        #expect(reopened.log.latestSnapshot?.position == last)
        #expect(try reopened.replayAll().isEmpty)
        #expect(reopened.log.recovery.endPosition == last)
    }

    @Test func snapshotBeyondTheSurvivingLogStartsANewSegmentThere() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let ends = try (0..<20).map { try log.append($0) }
        _ = try log.log.writeSnapshot([7], covering: ends[19])
        try log.log.close()
        // Lose the segment entirely: the snapshot still holds everything up to its position.
        for name in try fixture.segments() { try FileManager.default.removeItem(atPath: fixture.path(name)) }
        let reopened = try fixture.open()
        #expect(reopened.log.recovery.endPosition == ends[19])
        #expect(try reopened.replayAll().isEmpty)
        let next = try reopened.append(20)
        try reopened.log.close()
        #expect(try fixture.segments() == [LogFileName.segment(start: ends[19].offset)])
        #expect(try fixture.replayAll().map(\.end) == [next])
    }
}
