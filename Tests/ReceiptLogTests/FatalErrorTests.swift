import Foundation
import Glibc
import Logging
import Testing

@testable import ReceiptLog

struct FatalErrorTests {
    @Test func failedFsyncStopsTheLogForGood() throws {
        let fixture = try LogFixture()
        var configuration = fixture.configuration()
        configuration.faultInjection = FaultInjection { syncs in syncs >= 3 ? EIO : nil }
        let log = try OpenLog(configuration: configuration, logger: fixture.logs.logger)
        var durableEnds: [LogPosition] = []
        var index = 0
        while log.fatal.isEmpty {
            let end = try log.append(index)
            index += 1
            log.waitUntilDurable(end)
            if log.log.durablePosition >= end { durableEnds.append(end) }
        }
        #expect(durableEnds.count == 3)
        #expect(log.fatal.count == 1)
        #expect(log.fatal.first?.code == .fsyncFailed)
        #expect((log.fatal.first?.cause as? SystemCallError)?.errno == EIO)
        let frozen = log.log.durablePosition
        #expect(frozen == durableEnds.last)

        let appendError = #expect(throws: LogError.self) { try log.append(99) }
        #expect(appendError?.code == .closed)
        #expect((appendError?.cause as? LogError)?.code == .fsyncFailed)
        #expect(throws: LogError.self) { try log.log.flush() }
        #expect(log.log.durablePosition == frozen)
        let closeError = #expect(throws: LogError.self) { try log.log.close() }
        #expect(closeError?.code == .fsyncFailed)
        #expect(fixture.logs.entries.contains { $0.level == .critical })
        #expect(log.fatal.count == 1)

        // Restart recovers from the log: every record reported durable is there.
        let replayed = try fixture.replayAll()
        #expect(Array(replayed.map(\.end).prefix(durableEnds.count)) == durableEnds)
    }

    @Test func failedSegmentRollIsFatal() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 200 }
        var index = 0
        // Fill the first segment up to where the next record must start a new one.
        while log.log.appendedPosition.offset + 9 + UInt64(LogFixture.payload(index).count) <= 200 {
            log.waitUntilDurable(try log.append(index))
            index += 1
        }
        let blocked = fixture.path(LogFileName.segment(start: log.log.appendedPosition.offset))
        #expect(mkdir(blocked, 0o755) == 0)
        let end = try log.append(index)
        log.waitUntilFatal()
        #expect(log.log.durablePosition < end)
        #expect(log.fatal.first?.code == .io)
        #expect((log.fatal.first?.cause as? SystemCallError)?.errno == EEXIST)
        #expect(log.fatal.first?.file == blocked)
        #expect(throws: LogError.self) { try log.log.close() }

        rmdir(blocked)
        #expect(try fixture.replayAll().count == index)
    }

    @Test func failedSnapshotSyncIsFatalToo() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let end = try log.append(1)
        try log.log.flush()
        // A directory where the temporary file must go makes the snapshot write fail: an I/O
        // error that is not a sync failure, so the log keeps running.
        let temporary = fixture.path(LogFileName.temporary(forSnapshot: LogFileName.snapshot(position: end.offset)))
        #expect(mkdir(temporary, 0o755) == 0)
        let error = #expect(throws: LogError.self) { try log.log.writeSnapshot([1, 2, 3], covering: end) }
        #expect(error?.code == .io)
        #expect(log.fatal.isEmpty)
        rmdir(temporary)
        _ = try log.log.writeSnapshot([1, 2, 3], covering: end)
        try log.log.close()
    }
}
