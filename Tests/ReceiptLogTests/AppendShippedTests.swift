import Foundation
import Testing

@testable import ReceiptLog

/// Shipping records as they are stored: a cursor hands out their raw bytes, a standby appends
/// them at the primary's positions after checking every one, or appends nothing.
struct AppendShippedTests {
    @Test(arguments: [1, 200, 1 << 20])
    func aRawCopyGivesTheSameLog(maxBytes: Int) throws {
        let primaryFixture = try LogFixture()
        let standbyFixture = try LogFixture()
        let primaryEnds = try primaryFixture.populate(300) { $0.segmentSize = 512 }
        let primary = try primaryFixture.open { $0.segmentSize = 512 }
        let standby = try standbyFixture.open { $0.segmentSize = 1500 }

        let cursor = try primary.log.cursor(from: .zero)
        var calls = 0
        var runs = 0
        var handed = 0
        while true {
            var callBytes = 0
            var callRuns = 0
            let records = try cursor.readRaw(maxBytes: maxBytes) { bytes, start, end in
                #expect(end.offset - start.offset == UInt64(bytes.count))
                #expect(standby.log.appendedPosition == start)
                let appended = try standby.log.appendShipped(bytes, at: start)
                #expect(appended == end)
                callBytes += bytes.count
                callRuns += 1
            }
            guard records > 0 else { break }
            #expect(callBytes <= maxBytes || records == 1, "at most maxBytes, or one record")
            calls += 1
            runs += callRuns
            handed += records
        }
        let segmentCount = try primaryFixture.segments().count
        #expect(handed == 300)
        #expect(cursor.position == primaryEnds.last)
        #expect(standby.log.appendedPosition == primaryEnds.last)
        switch maxBytes {
        case 1: #expect(calls == 300)
        case 200: #expect(calls > 20)
        default: #expect(calls == 1 && runs == segmentCount, "one run a segment")
        }
        try standby.log.close()
        try primary.log.close()
        #expect(try standbyFixture.replayAll() == primaryFixture.replayAll { $0.segmentSize = 512 })
        #expect(try standbyFixture.replayAll() == (0..<300).map { Replayed.fixture($0, end: primaryEnds[$0]) })
    }

    @Test func recordsLongerThanTheCursorsBufferAreHandedWhole() throws {
        let primaryFixture = try LogFixture()
        let standbyFixture = try LogFixture()
        let primary = try primaryFixture.open { $0.segmentSize = 1 << 20 }
        defer { try? primary.log.close() }
        let standby = try standbyFixture.open()
        let big = (0..<3).map { [UInt8](repeating: UInt8($0 + 1), count: LogCursor.chunkSize * 2 + $0) }
        let ends = try [try primary.append(0)] + big.map { try primary.append($0, type: 9) } + [try primary.append(1)]
        primary.waitUntilDurable(ends.last!)

        let cursor = try primary.log.cursor(from: .zero)
        var sizes: [Int] = []
        while try cursor.readRaw(
            maxBytes: 1,
            { bytes, start, _ in
                sizes.append(bytes.count)
                _ = try standby.log.appendShipped(bytes, at: start)
            }
        ) > 0 {}
        #expect(
            sizes == [9 + LogFixture.payload(0).count] + big.map { 9 + $0.count } + [9 + LogFixture.payload(1).count]
        )
        try standby.log.close()
        #expect(
            try standbyFixture.replayAll()
                == [Replayed.fixture(0, end: ends[0])]
                + zip(big, ends[1...]).map { Replayed(type: 9, payload: $0, end: $1) }
                + [Replayed.fixture(1, end: ends[4])]
        )
    }

    struct Refused: Error {}

    @Test func aRunTheBodyRefusesIsHandedAgain() throws {
        let fixture = try LogFixture()
        let ends = try fixture.populate(50) { $0.segmentSize = 300 }
        let log = try fixture.open { $0.segmentSize = 300 }
        defer { try? log.log.close() }
        let cursor = try log.log.cursor(from: ends[9])
        var first: (start: LogPosition, bytes: [UInt8])?
        #expect(throws: Refused.self) {
            try cursor.readRaw { bytes, start, _ in
                if first == nil {
                    first = (start, Array(bytes))
                    return
                }
                throw Refused()
            }
        }
        let refusedAt = cursor.position
        #expect(refusedAt > ends[9])
        var again: (start: LogPosition, bytes: [UInt8])?
        _ = try cursor.readRaw { bytes, start, _ in
            if again == nil { again = (start, Array(bytes)) }
        }
        #expect(first?.start == ends[9])
        #expect(again?.start == refusedAt)
        #expect(cursor.position == ends[49])
    }

    /// The raw bytes of records 0..<10 of a fresh log, and where each record starts in them.
    static func shippedRecords() throws -> (bytes: [UInt8], starts: [Int]) {
        let fixture = try LogFixture()
        let ends = try fixture.populate(10)
        let log = try fixture.open()
        defer { try? log.log.close() }
        var bytes: [UInt8] = []
        _ = try log.log.cursor(from: .zero).readRaw { run, _, _ in bytes += run }
        #expect(bytes.count == Int(ends[9].offset))
        return (bytes, [0] + ends.dropLast().map { Int($0.offset) })
    }

    enum Damage: CaseIterable {
        case flippedPayload, flippedType, flippedChecksum, hugeLength, zeroedHeader, cutInPayload, cutInHeader
    }

    @Test(arguments: Damage.allCases)
    func damagedRecordsAppendNothing(damage: Damage) throws {
        var (bytes, starts) = try Self.shippedRecords()
        let damaged = starts[6]
        switch damage {
        case .flippedPayload: bytes[damaged + 10] ^= 0x40
        case .flippedType: bytes[damaged + 4] ^= 0x01
        case .flippedChecksum: bytes[damaged + 7] ^= 0x80
        case .hugeLength: bytes[damaged + 3] = 0xFF
        case .zeroedHeader: bytes.replaceSubrange(damaged..<(damaged + 9), with: [UInt8](repeating: 0, count: 9))
        case .cutInPayload: bytes.removeLast(2)
        case .cutInHeader: bytes.removeSubrange((starts[9] + 4)...)
        }
        let expectedOffset = damage == .cutInPayload || damage == .cutInHeader ? starts[9] : damaged
        let fixture = try LogFixture()
        let log = try fixture.open()
        let before = try log.append(100)
        let base = Int(before.offset)
        let error = #expect(throws: LogError.self) {
            try bytes.withUnsafeBytes { try log.log.appendShipped($0, at: before) }
        }
        #expect(error?.code == .corruption)
        #expect(error?.message.contains("offset \(expectedOffset) (log position \(base + expectedOffset))") == true)
        #expect(log.log.appendedPosition == before)
        try log.log.close()
        #expect(try fixture.replayAll() == [Replayed.fixture(100, end: before)])
    }

    @Test func emptyOrMisplacedRecordsAppendNothing() throws {
        let (bytes, _) = try Self.shippedRecords()
        let fixture = try LogFixture()
        let log = try fixture.open()
        let first = try log.append(100)
        let empty = #expect(throws: LogError.self) {
            try log.log.appendShipped(UnsafeRawBufferPointer(start: nil, count: 0), at: first)
        }
        #expect(empty?.code == .invalidArgument)
        for wrong in [LogPosition.zero, LogPosition(offset: first.offset + 1)] {
            let error = #expect(throws: LogError.self) {
                try bytes.withUnsafeBytes { try log.log.appendShipped($0, at: wrong) }
            }
            #expect(error?.code == .positionMismatch, "at \(wrong)")
            #expect(log.log.appendedPosition == first)
        }
        let end = try bytes.withUnsafeBytes { try log.log.appendShipped($0, at: first) }
        #expect(end.offset == first.offset + UInt64(bytes.count))
        try log.log.close()
        let replayed = try fixture.replayAll()
        #expect(replayed.map(\.payload) == [LogFixture.payload(100)] + (0..<10).map { LogFixture.payload($0) })
        #expect(replayed.last?.end == end)
    }
}
