import Foundation
import Logging
import Testing

@testable import ReceiptLog

struct TornTailTests {
    /// A log of several small segments, with its record ends and the last segment's name and start.
    struct SmallLog {
        let fixture: LogFixture
        let ends: [LogPosition]
        let segments: [String]

        init(records: Int = 40) throws {
            self.fixture = try LogFixture()
            self.ends = try self.fixture.populate(records) { $0.segmentSize = 300 }
            self.segments = try self.fixture.segments()
        }

        var last: String { self.segments.last! }

        func start(of name: String) -> UInt64 {
            guard case .segment(let start) = LogFileName.parse(name) else { fatalError("not a segment: \(name)") }
            return start
        }

        /// The file offset in `segment` of the record that ends at `ends[index]`.
        func fileOffset(ofRecord index: Int, in segment: String) -> Int {
            let recordStart = index == 0 ? 0 : self.ends[index - 1].offset
            return Int(recordStart - self.start(of: segment)) + RecordFormat.segmentHeaderSize
        }

        /// The index of the first record stored in `segment`.
        func firstRecord(in segment: String) -> Int {
            self.ends.firstIndex { $0.offset > self.start(of: segment) }!
        }

        func expectedRecords(upTo end: UInt64) -> [Replayed] {
            self.ends.enumerated().filter { $0.element.offset <= end }.map {
                Replayed.fixture($0.offset, end: $0.element)
            }
        }
    }

    @Test func truncatingTheLastSegmentAtEveryOffsetRecoversExactlyTheWholeRecords() throws {
        let log = try SmallLog()
        #expect(log.segments.count >= 3)
        let original = try log.fixture.contents()
        let lastBytes = original[log.last]!
        let lastStart = log.start(of: log.last)
        let header = RecordFormat.segmentHeaderSize
        for cut in 0..<lastBytes.count {
            try log.fixture.restore(original)
            try log.fixture.write(log.last, Array(lastBytes[..<cut]))
            let verified = try ReceiptLog.verify(directory: log.fixture.directory)

            let opened = try log.fixture.open()
            let whole = log.expectedRecords(upTo: lastStart + UInt64(max(cut - header, 0)))
            #expect(try opened.replayAll() == whole, "cut at \(cut)")
            let validEnd =
                cut < header ? 0 : header + Int(whole.last!.end.offset - min(whole.last!.end.offset, lastStart))
            let recovery = opened.log.recovery
            #expect(recovery.truncatedBytes == UInt64(cut - validEnd), "cut at \(cut)")
            #expect(recovery.droppedRecords == (cut > header && cut > validEnd ? 1 : 0), "cut at \(cut)")
            #expect(recovery.truncatedFile == (cut == validEnd && cut > 0 ? nil : log.last), "cut at \(cut)")
            #expect(recovery.damage?.isTruncatableTail ?? true)
            #expect(verified.problem == recovery.damage, "cut at \(cut)")
            #expect(recovery.endPosition == whole.last!.end)

            let next = try opened.append(1_000)
            #expect(next.offset == whole.last!.end.offset + 9 + UInt64(LogFixture.payload(1_000).count))
            try opened.log.close()
            #expect(try ReceiptLog.verify(directory: log.fixture.directory).isClean, "cut at \(cut)")
        }
    }

    @Test func garbageAfterTheLastRecordIsTruncatedAndReported() throws {
        let log = try SmallLog()
        var bytes = try log.fixture.read(log.last)
        var generator = SystemRandomNumberGenerator()
        let garbage = [0xA5] + (0..<99).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes += garbage
        try log.fixture.write(log.last, bytes)

        let opened = try log.fixture.open()
        #expect(try opened.replayAll() == log.expectedRecords(upTo: .max))
        #expect(opened.log.recovery.truncatedBytes == 100)
        #expect(opened.log.recovery.droppedRecords == 1)
        #expect(opened.log.recovery.damage?.offset == UInt64(bytes.count - 100))
        let warning = log.fixture.logs.entries.first { $0.level == .warning }
        #expect(warning?.metadata["log.truncated_bytes"] == "100")
        #expect(warning?.metadata["log.dropped_records"] == "1")
        #expect(warning?.metadata["log.file"] == .string(log.fixture.path(log.last)))
        #expect(warning?.metadata["log.offset"] == .string("\(bytes.count - 100)"))
        try opened.log.close()
        #expect(try log.fixture.read(log.last).count == bytes.count - 100)
    }

    @Test func zeroFilledTailIsTruncatedWithNoRecordsDropped() throws {
        let log = try SmallLog()
        try log.fixture.write(log.last, try log.fixture.read(log.last) + [UInt8](repeating: 0, count: 4096))
        let opened = try log.fixture.open()
        defer { try? opened.log.close() }
        #expect(try opened.replayAll() == log.expectedRecords(upTo: .max))
        #expect(opened.log.recovery.damage?.kind == .zeroFill)
        #expect(opened.log.recovery.truncatedBytes == 4096)
        #expect(opened.log.recovery.droppedRecords == 0)
    }

    @Test func flippedByteInTheLastRecordIsATornTail() throws {
        let log = try SmallLog()
        var bytes = try log.fixture.read(log.last)
        bytes[bytes.count - 1] ^= 0x40
        try log.fixture.write(log.last, bytes)
        let opened = try log.fixture.open()
        defer { try? opened.log.close() }
        let lastIndex = log.ends.count - 1
        #expect(try opened.replayAll() == log.expectedRecords(upTo: log.ends[lastIndex - 1].offset))
        #expect(opened.log.recovery.damage?.kind == .checksumMismatch)
        #expect(opened.log.recovery.damage?.offset == UInt64(log.fileOffset(ofRecord: lastIndex, in: log.last)))
        #expect(opened.log.recovery.droppedRecords == 1)
    }

    @Test(arguments: [0, 4, 5, 9])
    func flippedByteInAnEarlierSegmentStopsStartUp(byteInRecord: Int) throws {
        let log = try SmallLog()
        let segment = log.segments[1]
        let record = log.firstRecord(in: segment) + 1
        let offset = log.fileOffset(ofRecord: record, in: segment)
        var bytes = try log.fixture.read(segment)
        bytes[offset + byteInRecord] ^= byteInRecord == 0 ? 0x80 : 0x01
        try log.fixture.write(segment, bytes)
        let before = try log.fixture.contents()

        let error = #expect(throws: LogError.self) { try log.fixture.open() }
        #expect(error?.code == .corruption)
        #expect(error?.file == log.fixture.path(segment))
        #expect(error?.offset == UInt64(offset))
        #expect(try log.fixture.contents() == before)

        let verified = try ReceiptLog.verify(directory: log.fixture.directory)
        #expect(verified.problem?.file == segment)
        #expect(verified.problem?.offset == UInt64(offset))
        #expect(verified.problem?.isTruncatableTail == false)
    }

    @Test func flippedByteMidLastSegmentWithValidRecordsAfterStopsStartUp() throws {
        let log = try SmallLog()
        let record = log.firstRecord(in: log.last)
        #expect(record < log.ends.count - 2)
        let offset = log.fileOffset(ofRecord: record, in: log.last)
        var bytes = try log.fixture.read(log.last)
        bytes[offset + 9] ^= 0xFF
        try log.fixture.write(log.last, bytes)

        let error = #expect(throws: LogError.self) { try log.fixture.open() }
        #expect(error?.code == .corruption)
        #expect(error?.file == log.fixture.path(log.last))
        #expect(error?.offset == UInt64(offset))
    }

    @Test func cutCorruptionAtStartTruncatesThereWhenTheOperatorAsks() throws {
        let log = try SmallLog()
        let segment = log.segments[1]
        let record = log.firstRecord(in: segment) + 1
        let offset = log.fileOffset(ofRecord: record, in: segment)
        var bytes = try log.fixture.read(segment)
        bytes[offset + 9] ^= 0x10
        try log.fixture.write(segment, bytes)
        let laterBytes = try log.segments[2...].reduce(0) { $0 + (try log.fixture.read($1).count) }

        let opened = try log.fixture.open { $0.cutCorruptionAtStart = true }
        #expect(try opened.replayAll() == log.expectedRecords(upTo: log.ends[record - 1].offset))
        let recovery = opened.log.recovery
        #expect(recovery.damage?.isTruncatableTail == false)
        #expect(recovery.damage?.kind == .checksumMismatch)
        #expect(recovery.truncatedFile == segment)
        #expect(recovery.truncatedBytes == UInt64(bytes.count - offset + laterBytes))
        #expect(recovery.droppedRecords == log.ends.count - record)
        #expect(try log.fixture.segments() == Array(log.segments[...1]))
        _ = try opened.append(7)
        try opened.log.close()

        let reopened = try log.fixture.replayAll()
        #expect(reopened.dropLast() == log.expectedRecords(upTo: log.ends[record - 1].offset)[...])
        #expect(reopened.last?.payload == LogFixture.payload(7))
    }

    @Test func missingSegmentIsAGap() throws {
        let log = try SmallLog()
        try FileManager.default.removeItem(atPath: log.fixture.path(log.segments[1]))
        let error = #expect(throws: LogError.self) { try log.fixture.open() }
        #expect(error?.code == .gap)
        #expect(error?.file == log.fixture.path(log.segments[2]))
        #expect(try ReceiptLog.verify(directory: log.fixture.directory).problem?.kind == .gap)

        let opened = try log.fixture.open { $0.cutCorruptionAtStart = true }
        defer { try? opened.log.close() }
        #expect(try opened.replayAll() == log.expectedRecords(upTo: log.start(of: log.segments[1])))
        #expect(try log.fixture.segments() == [log.segments[0]])
    }

    @Test func missingFirstSegmentWithoutSnapshotIsAGap() throws {
        let log = try SmallLog()
        try FileManager.default.removeItem(atPath: log.fixture.path(log.segments[0]))
        let error = #expect(throws: LogError.self) { try log.fixture.open() }
        #expect(error?.code == .gap)
        #expect(error?.file == log.fixture.path(log.segments[1]))
    }

    @Test func damagedHeaderOfAnEarlierSegmentStopsStartUp() throws {
        let log = try SmallLog()
        var bytes = try log.fixture.read(log.segments[1])
        bytes[3] ^= 0x01
        try log.fixture.write(log.segments[1], bytes)
        let error = #expect(throws: LogError.self) { try log.fixture.open() }
        #expect(error?.code == .corruption)
        #expect(error?.offset == 0)
        #expect(try ReceiptLog.verify(directory: log.fixture.directory).problem?.kind == .badSegmentHeader)
    }

    @Test func segmentRenamedToTheWrongStartIsRejected() throws {
        let log = try SmallLog()
        let wrong = LogFileName.segment(start: log.start(of: log.last) + 1)
        try FileManager.default.moveItem(atPath: log.fixture.path(log.last), toPath: log.fixture.path(wrong))
        try log.fixture.write(log.last, RecordFormat.segmentHeader(start: log.start(of: log.last)))
        let error = #expect(throws: LogError.self) { try log.fixture.open() }
        #expect(error?.file == log.fixture.path(wrong))
    }
}
