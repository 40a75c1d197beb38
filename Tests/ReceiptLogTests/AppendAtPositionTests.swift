import Foundation
import Testing

@testable import ReceiptLog

/// A standby's append: the primary's records at the primary's positions, or nothing.
struct AppendAtPositionTests {
    @Test func aCopyThroughACursorReplaysToTheSameRecords() throws {
        let primaryFixture = try LogFixture()
        let standbyFixture = try LogFixture()
        let primaryEnds = try primaryFixture.populate(300) { $0.segmentSize = 512 }
        let primary = try primaryFixture.open { $0.segmentSize = 512 }
        // Another segment size: positions do not depend on where segments roll.
        let standby = try standbyFixture.open { $0.segmentSize = 1500 }

        let cursor = try primary.log.cursor(from: .zero)
        var copied: [LogPosition] = []
        while try cursor.read(
            maxBytes: 700,
            { record in
                #expect(standby.log.appendedPosition == record.start)
                copied.append(try standby.log.append(type: record.type, payload: record.payload, at: record.start))
            }
        ) > 0 {}
        #expect(copied == primaryEnds)
        try standby.log.close()
        try primary.log.close()

        #expect(try standbyFixture.replayAll() == primaryFixture.replayAll { $0.segmentSize = 512 })
        #expect(try standbyFixture.segments().count < primaryFixture.segments().count)
    }

    @Test func refusesAPositionOtherThanTheAppendedEnd() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let first = try log.append(0)
        let payload = LogFixture.payload(1)
        for wrong in [LogPosition.zero, LogPosition(offset: first.offset - 1), LogPosition(offset: first.offset + 1)] {
            let error = #expect(throws: LogError.self) {
                try payload.withUnsafeBytes { try log.log.append(type: 2, payload: $0, at: wrong) }
            }
            #expect(error?.code == .positionMismatch, "at \(wrong)")
            #expect(log.log.appendedPosition == first)
        }
        let second = try payload.withUnsafeBytes {
            try log.log.append(type: LogFixture.type(1), payload: $0, at: first)
        }
        try log.log.close()
        #expect(try fixture.replayAll() == [Replayed.fixture(0, end: first), Replayed.fixture(1, end: second)])
    }
}
