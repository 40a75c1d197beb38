import Foundation
import Testing

@testable import ReceiptLog

struct AppendReplayTests {
    @Test func emptyLogOpensAndReplaysNothing() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        #expect(try log.replayAll() == [])
        #expect(log.log.recovery.truncatedBytes == 0)
        #expect(log.log.recovery.snapshotPosition == nil)
        #expect(log.log.latestSnapshot == nil)
        #expect(log.log.appendedPosition == .zero)
        try log.log.close()
        #expect(try fixture.segments() == ["segment-00000000000000000000.log"])
    }

    @Test func roundTripAcrossSegmentsWithContiguousPositions() throws {
        let fixture = try LogFixture()
        let ends = try fixture.populate(300) { $0.segmentSize = 512 }
        #expect(try fixture.segments().count > 10)

        let replayed = try fixture.replayAll { $0.segmentSize = 512 }
        #expect(replayed == (0..<300).map { Replayed.fixture($0, end: ends[$0]) })
        var previous: UInt64 = 0
        for (index, record) in replayed.enumerated() {
            #expect(record.end.offset == previous + 9 + UInt64(record.payload.count), "record \(index)")
            previous = record.end.offset
        }
        // Every segment file starts where the previous one ended.
        var expectedStart: UInt64 = 0
        for name in try fixture.segments() {
            #expect(name == LogFileName.segment(start: expectedStart))
            expectedStart += UInt64(try fixture.read(name).count - RecordFormat.segmentHeaderSize)
        }
        #expect(expectedStart == ends.last?.offset)
    }

    @Test func reopenContinuesAppending() throws {
        let fixture = try LogFixture()
        let first = try fixture.populate(50) { $0.segmentSize = 400 }
        let log = try fixture.open { $0.segmentSize = 400 }
        #expect(log.log.recovery.endPosition == first.last)
        #expect(log.log.recovery.recordsToReplay == 50)
        #expect(try log.replayAll().count == 50)
        let second = try (50..<120).map { try log.append($0) }
        try log.log.close()
        #expect(second.first!.offset == first.last!.offset + 9 + UInt64(LogFixture.payload(50).count))

        let replayed = try fixture.replayAll()
        #expect(replayed == (0..<120).map { Replayed.fixture($0, end: (first + second)[$0]) })
    }

    @Test func emptyPayloadsAndTypesRoundTrip() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let ends = try (0..<256).map { try log.append([], type: UInt8($0)) }
        try log.log.close()
        let replayed = try fixture.replayAll()
        #expect(replayed == (0..<256).map { Replayed(type: UInt8($0), payload: [], end: ends[$0]) })
    }

    @Test func largeRecordsSpanGroupsAndSegments() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 1 << 20 }
        let big = (0..<3).map { index in [UInt8](repeating: UInt8(index + 1), count: 700_000 + index) }
        let ends = try big.map { try log.append($0, type: 9) }
        try log.log.close()
        let replayed = try fixture.replayAll()
        #expect(replayed == zip(big, ends).map { Replayed(type: 9, payload: $0, end: $1) })
        #expect(try fixture.segments().count == 3)
    }

    @Test func oversizedPayloadIsRejected() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        defer { try? log.log.close() }
        let huge = UnsafeMutableRawBufferPointer.allocate(byteCount: RecordFormat.maxPayload + 1, alignment: 1)
        defer { huge.deallocate() }
        let error = #expect(throws: LogError.self) {
            try log.log.append(type: 1, payload: UnsafeRawBufferPointer(huge))
        }
        #expect(error?.code == .invalidArgument)
        #expect(log.log.appendedPosition == .zero)
    }

    @Test func appendAfterCloseThrowsClosedAndCloseIsIdempotent() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        _ = try log.append(1)
        try log.log.close()
        try log.log.close()
        let error = #expect(throws: LogError.self) { try log.append(2) }
        #expect(error?.code == .closed)
        #expect(try fixture.replayAll().count == 1)
    }

    @Test func secondOpenOfTheSameDirectoryIsRefused() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let error = #expect(throws: LogError.self) { try fixture.open() }
        #expect(error?.code == .locked)
        try log.log.close()
        try fixture.open().log.close()
    }

    @Test func invalidConfigurationIsRejected() throws {
        let fixture = try LogFixture()
        for configure: (inout LogConfiguration) -> Void in [
            { $0.segmentSize = 0 }, { $0.fsyncPolicy = .interval(milliseconds: 0) }, { $0.maxPendingBytes = 0 },
        ] {
            let error = #expect(throws: LogError.self) { try fixture.open(configure) }
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test func unreadableDirectoryIsAnIOError() throws {
        let fixture = try LogFixture()
        try fixture.populate(1)
        try fixture.write("file-in-the-way", [1])
        let error = #expect(throws: LogError.self) {
            try ReceiptLog(
                configuration: LogConfiguration(directory: fixture.path("file-in-the-way") + "/log"),
                logger: fixture.logs.logger,
                onDurable: {},
                onFatal: { _ in }
            )
        }
        #expect(error?.code == .io)
        #expect(error?.file != nil)
    }
}
