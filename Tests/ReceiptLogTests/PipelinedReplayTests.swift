import Testing

@testable import ReceiptLog

/// `replay(depth:preparing:applying:)`: the records of `replay(_:)`, in order, and either
/// side's error stops both threads.
struct PipelinedReplayTests {
    struct Failure: Error, Equatable {
        let index: Int
    }

    /// A log of 300 records in small segments, closed and reopened (the fixture owns its
    /// directory: keep it alive).
    static func reopenedLog() throws -> (LogFixture, OpenLog, [Replayed]) {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 2048 }
        for index in 0..<300 { _ = try log.append(index) }
        try log.log.close()
        let reopened = try fixture.open()
        return (fixture, reopened, try reopened.replayAll())
    }

    @Test(arguments: [1, 2, 16])
    func deliversTheRecordsOfReplayInOrder(depth: Int) throws {
        let (fixture, log, expected) = try Self.reopenedLog()
        defer { withExtendedLifetime(fixture) { try? log.log.close() } }
        var applied: [Replayed] = []
        try log.log.replay(depth: depth) { type, payload, end in
            Replayed(type: type, payload: Array(payload), end: end)
        } applying: {
            applied.append($0)
        }
        #expect(expected.count == 300)
        #expect(applied == expected)
    }

    @Test func anErrorInPrepareComesAfterEveryRecordBeforeIt() throws {
        let (fixture, log, expected) = try Self.reopenedLog()
        defer { withExtendedLifetime(fixture) { try? log.log.close() } }
        var applied: [Replayed] = []
        let error = #expect(throws: Failure.self) {
            try log.log.replay { type, payload, end in
                let record = Replayed(type: type, payload: Array(payload), end: end)
                if record == expected[120] { throw Failure(index: 120) }
                return record
            } applying: {
                applied.append($0)
            }
        }
        #expect(error == Failure(index: 120))
        #expect(applied == Array(expected[..<120]))
    }

    @Test(arguments: [1, 16])
    func anErrorInApplyStopsTheHelper(depth: Int) throws {
        let (fixture, log, expected) = try Self.reopenedLog()
        defer { withExtendedLifetime(fixture) { try? log.log.close() } }
        var applied = 0
        let error = #expect(throws: Failure.self) {
            try log.log.replay(depth: depth) { type, payload, end in
                Replayed(type: type, payload: Array(payload), end: end)
            } applying: { record in
                guard record != expected[40] else { throw Failure(index: 40) }
                applied += 1
            }
        }
        #expect(error == Failure(index: 40))
        #expect(applied == 40)
        // The helper is gone: the log replays again from the start.
        #expect(try log.replayAll() == expected)
    }
}
