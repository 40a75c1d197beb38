import Foundation
import Testing

@testable import ReceiptLog

/// Pins: compaction keeps what a reader still needs, and deletes it after the release.
struct LogPinTests {
    @Test func aPinnedSegmentSurvivesCompactionAndGoesAfterTheRelease() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 400 }
        defer { try? log.log.close() }
        var ends = try (0..<120).map { try log.append($0) }
        let pin = try log.log.pin(ends[10])
        #expect(pin.position == ends[10])
        let pinnedSegment = try #require(try fixture.segmentStarts().last { $0 <= ends[10].offset })

        _ = try log.log.writeSnapshot([1], covering: ends[60])
        ends += try (120..<200).map { try log.append($0) }
        _ = try log.log.writeSnapshot([2], covering: ends[199])
        // The previous snapshot covers the pinned segment (the next one starts before it), so
        // compaction would delete it but for the pin; only those before it went.
        let starts = try fixture.segmentStarts()
        #expect(starts.first == pinnedSegment)
        #expect(starts[1] <= ends[60].offset)
        log.waitUntilDurable(ends.last!)
        #expect(try log.log.cursor(from: ends[10]).readAll() == (11..<200).map { Replayed.fixture($0, end: ends[$0]) })

        pin.release()
        #expect(pin.position == nil)
        pin.release()
        ends += try (200..<240).map { try log.append($0) }
        let third = try log.log.writeSnapshot([3], covering: ends[239])
        #expect(third.segmentsRemoved > 0)
        let oldest = try #require(try fixture.segmentStarts().first)
        #expect(oldest > ends[60].offset && oldest <= ends[199].offset)
        let error = #expect(throws: LogError.self) { try log.log.cursor(from: ends[10]) }
        #expect(error?.code == .compacted)
    }

    @Test func theLowestPinHoldsAndAMovedPinLetsGo() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 400 }
        defer { try? log.log.close() }
        var ends = try (0..<120).map { try log.append($0) }
        let low = try log.log.pin(ends[5])
        let high = try log.log.pin(ends[90])
        _ = try log.log.writeSnapshot([1], covering: ends[100])
        ends += try (120..<160).map { try log.append($0) }
        _ = try log.log.writeSnapshot([2], covering: ends[159])
        #expect(try fixture.segmentStarts().first! <= ends[5].offset)

        try low.advance(to: ends[80])
        #expect(low.position == ends[80])
        ends += try (160..<200).map { try log.append($0) }
        _ = try log.log.writeSnapshot([3], covering: ends[199])
        let oldest = try #require(try fixture.segmentStarts().first)
        #expect(oldest > ends[5].offset && oldest <= ends[80].offset)

        let backwards = #expect(throws: LogError.self) { try low.advance(to: ends[10]) }
        #expect(backwards?.code == .invalidArgument)
        let beyond = #expect(throws: LogError.self) { try high.advance(to: LogPosition(offset: ends[199].offset + 1)) }
        #expect(beyond?.code == .invalidArgument)
        high.release()
        let released = #expect(throws: LogError.self) { try high.advance(to: ends[199]) }
        #expect(released?.code == .invalidArgument)
    }

    @Test func refusesWhatCompactionAlreadyDeletedOrTheLogDoesNotHold() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 400 }
        defer { try? log.log.close() }
        let ends = try (0..<120).map { try log.append($0) }
        _ = try log.log.writeSnapshot([1], covering: ends[60])
        _ = try log.log.writeSnapshot([2], covering: ends[119])
        let gone = #expect(throws: LogError.self) { try log.log.pin(.zero) }
        #expect(gone?.code == .compacted)
        let beyond = #expect(throws: LogError.self) { try log.log.pin(LogPosition(offset: ends[119].offset + 1)) }
        #expect(beyond?.code == .invalidArgument)
        #expect(try log.log.pin(ends[119]).position == ends[119])
    }

    @Test func aPinLetGoWithoutReleaseIsReleased() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        defer { try? log.log.close() }
        _ = try log.log.pin(.zero)
        #expect(log.log.writer.state.withLock { $0.pins.isEmpty })
    }
}
