import Foundation
import Testing

@testable import ReceiptLog

/// Cutting a closed log back to a position: exactly the records before the cut survive a
/// reopen, a crash between any two steps leaves a prefix that opens, and what cannot be cut
/// is refused.
struct TruncateTests {
    /// 200 records in small segments, a snapshot at record 59's end and one at record 149's.
    struct Fixture {
        let log = try! LogFixture()
        let ends: [LogPosition]
        static let snapshots = [59, 149]

        init() throws {
            let open = try self.log.open { $0.segmentSize = 400 }
            var ends = try (0..<150).map { try open.append($0) }
            _ = try open.log.writeSnapshot([0], covering: ends[Self.snapshots[0]])
            _ = try open.log.writeSnapshot([1], covering: ends[Self.snapshots[1]])
            ends += try (150..<200).map { try open.append($0) }
            try open.log.close()
            self.ends = ends
        }

        /// What reopening must give after a cut at record `index`'s end: the newest snapshot
        /// at or before it, and the records after that snapshot up to the cut.
        func expected(cutAfter index: Int) -> (snapshot: LogPosition?, records: [Replayed]) {
            let snapshot = Self.snapshots.last { $0 <= index }
            let first = snapshot.map { $0 + 1 } ?? 0
            return (
                snapshot.map { self.ends[$0] }, (first..<index + 1).map { Replayed.fixture($0, end: self.ends[$0]) }
            )
        }

        /// Opens the log and returns its snapshot position and replayed records.
        func reopen() throws -> (snapshot: LogPosition?, records: [Replayed], end: LogPosition) {
            let open = try self.log.open { $0.segmentSize = 400 }
            defer { try? open.log.close() }
            return (open.log.recovery.snapshotPosition, try open.replayAll(), open.log.recovery.endPosition)
        }
    }

    @Test(arguments: [59, 100, 149, 150, 198, 199])
    func reopeningGivesExactlyTheRecordsBeforeTheCut(index: Int) throws {
        let fixture = try Fixture()
        let previousEnd = try ReceiptLog.truncate(directory: fixture.log.directory, to: fixture.ends[index])
        #expect(previousEnd == fixture.ends[199])
        let reopened = try fixture.reopen()
        let expected = fixture.expected(cutAfter: index)
        #expect(reopened.snapshot == expected.snapshot)
        #expect(reopened.records == expected.records)
        #expect(reopened.end == fixture.ends[index])
        #expect(try fixture.log.snapshots().count == (index < 149 ? 1 : 2))

        // The log goes on from the cut, and cutting again at the end changes nothing.
        let open = try fixture.log.open { $0.segmentSize = 400 }
        let next = try open.append(500)
        try open.log.close()
        #expect(next.offset == fixture.ends[index].offset + 9 + UInt64(LogFixture.payload(500).count))
        let files = try fixture.log.contents()
        try ReceiptLog.truncate(directory: fixture.log.directory, to: next)
        #expect(try fixture.log.contents() == files)
    }

    @Test func aCutAtASegmentsStartKeepsTheSegmentBefore() throws {
        let fixture = try Fixture()
        let start = try #require(try fixture.log.segmentStarts().last { $0 > fixture.ends[100].offset })
        let index = try #require(fixture.ends.firstIndex { $0.offset == start })
        try ReceiptLog.truncate(directory: fixture.log.directory, to: fixture.ends[index])
        #expect(try fixture.reopen().records == fixture.expected(cutAfter: index).records)
    }

    /// A crash after any number of the truncation's steps (each synced before the next) leaves
    /// a log that opens to a prefix of the old one, ending at or after the cut, with no
    /// snapshot past its end; truncating again gives exactly the cut.
    @Test(arguments: [70, 120, 160])
    func aCrashBetweenAnyTwoStepsLeavesAPrefixThatTruncatingAgainFinishes(index: Int) throws {
        let fixture = try Fixture()
        let original = try fixture.log.contents()
        let cut = fixture.ends[index]
        let truncation = try LogTruncation(directory: fixture.log.directory, position: cut.offset)
        #expect(truncation.steps.count >= 3)
        for done in 0...truncation.steps.count {
            try fixture.log.restore(original)
            for step in truncation.steps.prefix(done) { try truncation.apply(step) }

            let crashed = try fixture.reopen()
            #expect(crashed.end >= cut, "after \(done) steps")
            let last = try #require(fixture.ends.firstIndex(of: crashed.end), "after \(done) steps")
            let snapshot = Fixture.snapshots.last { fixture.ends[$0] == crashed.snapshot }
            #expect(crashed.snapshot == snapshot.map { fixture.ends[$0] }, "after \(done) steps")
            let first = snapshot.map { $0 + 1 } ?? 0
            #expect(
                crashed.records == (first..<last + 1).map { Replayed.fixture($0, end: fixture.ends[$0]) },
                "after \(done) steps"
            )

            try ReceiptLog.truncate(directory: fixture.log.directory, to: cut)
            let finished = try fixture.reopen()
            let expected = fixture.expected(cutAfter: index)
            #expect(finished.snapshot == expected.snapshot, "after \(done) steps")
            #expect(finished.records == expected.records, "after \(done) steps")
        }
    }

    @Test func refusesWhatItCannotCut() throws {
        let fixture = try Fixture()
        let directory = fixture.log.directory
        let files = try fixture.log.contents()
        func refusal(_ position: LogPosition) -> LogError.Code? {
            (#expect(throws: LogError.self) { try ReceiptLog.truncate(directory: directory, to: position) })?.code
        }
        #expect(refusal(LogPosition(offset: fixture.ends[120].offset + 4)) == .notRecordBoundary)
        #expect(refusal(LogPosition(offset: fixture.ends[199].offset + 1)) == .invalidArgument)
        // Before the oldest snapshot, the segments to recover from are gone.
        #expect(try fixture.log.segmentStarts().first! > 0)
        #expect(refusal(fixture.ends[20]) == .compacted)
        #expect(refusal(.zero) == .compacted)
        #expect(try fixture.log.contents() == files)

        let open = try fixture.log.open { $0.segmentSize = 400 }
        #expect(refusal(fixture.ends[100]) == .locked)
        try open.log.close()
        #expect(try fixture.log.contents().filter { $0.key != "LOCK" } == files.filter { $0.key != "LOCK" })
    }

    @Test func aLogThatKeepsEverySegmentCutsBackToItsStart() throws {
        let fixture = try LogFixture()
        try fixture.populate(50) { $0.segmentSize = 400 }
        try ReceiptLog.truncate(directory: fixture.directory, to: .zero)
        let log = try fixture.open()
        defer { try? log.log.close() }
        #expect(try log.replayAll().isEmpty)
        #expect(log.log.recovery.endPosition == .zero)
    }
}
