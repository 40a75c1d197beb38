import Dispatch
import Foundation
import Synchronization
import Testing

@testable import ReceiptLog

/// The tailing cursor: exactly the durable records, in order, across segments; what became
/// durable since on the next read; resumable from any position it returned; clear refusals.
struct LogCursorTests {
    @Test(arguments: [1, 200, 1 << 20])
    func readsExactlyTheDurableRecordsInOrderAcrossSegments(maxBytes: Int) throws {
        let fixture = try LogFixture()
        let ends = try fixture.populate(300) { $0.segmentSize = 512 }
        #expect(try fixture.segments().count > 10)
        let log = try fixture.open { $0.segmentSize = 512 }
        defer { try? log.log.close() }

        let cursor = try log.log.cursor(from: .zero)
        var records: [Replayed] = []
        var starts: [LogPosition] = []
        var calls = 0
        while try cursor.read(
            maxBytes: maxBytes,
            { record in
                records.append(Replayed(type: record.type, payload: Array(record.payload), end: record.end))
                starts.append(record.start)
            }
        ) > 0 {
            calls += 1
        }
        #expect(records == (0..<300).map { Replayed.fixture($0, end: ends[$0]) })
        #expect(starts == [.zero] + ends.dropLast())
        #expect(cursor.position == ends.last)
        switch maxBytes {
        case 1: #expect(calls == 300, "one record a call, whatever the limit")
        case 200: #expect(calls > 10)
        default: #expect(calls == 1, "one call crosses every segment")
        }
        #expect(try cursor.read { _ in Issue.record("read past the end") } == 0)
    }

    @Test func readsRecordsLongerThanItsBuffer() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 1 << 20 }
        defer { try? log.log.close() }
        let big = (0..<3).map { index in [UInt8](repeating: UInt8(index + 1), count: LogCursor.chunkSize * 3 + index) }
        let ends = try [try log.append(0)] + big.map { try log.append($0, type: 9) } + [try log.append(1)]
        log.waitUntilDurable(ends.last!)
        let cursor = try log.log.cursor(from: .zero)
        #expect(
            try cursor.readAll(maxBytes: 1)
                == [Replayed.fixture(0, end: ends[0])]
                + zip(big, ends[1...]).map { Replayed(type: 9, payload: $0, end: $1) }
                + [Replayed.fixture(1, end: ends[4])]
        )
    }

    @Test func seesNewRecordsOnceDurableAndNotBefore() throws {
        let fixture = try LogFixture()
        let gate = SyncGate()
        let log = try OpenLog(
            configuration: fixture.configuration {
                $0.segmentSize = 512
                $0.faultInjection = FaultInjection { _ in
                    gate.pass()
                    return nil
                }
            },
            logger: fixture.logs.logger
        )
        defer { try? log.log.close() }
        // Runs before the close, whatever the test's outcome: a held writer could not stop.
        defer { gate.open() }
        let cursor = try log.log.cursor(from: .zero)
        #expect(try cursor.readAll().isEmpty)

        var ends = try (0..<40).map { try log.append($0) }
        log.waitUntilDurable(ends.last!)
        #expect(try cursor.readAll() == (0..<40).map { Replayed.fixture($0, end: ends[$0]) })

        // The writer writes the next records, then waits to sync them: written, not durable.
        gate.close()
        ends += try (40..<50).map { try log.append($0) }
        gate.waitUntilHeld()
        #expect(log.log.durablePosition == ends[39])
        #expect(try cursor.readAll().isEmpty)
        #expect(cursor.position == ends[39])

        gate.open()
        log.waitUntilDurable(ends.last!)
        #expect(try cursor.readAll() == (40..<50).map { Replayed.fixture($0, end: ends[$0]) })
    }

    @Test func followsTheWriterWhileItAppends() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 1024 }
        defer { try? log.log.close() }
        let cursor = try log.log.cursor(from: .zero)
        let writer = DispatchQueue(label: "appender")
        writer.async {
            for index in 0..<2000 { _ = try? log.append(index) }
        }
        var end: UInt64 = 0
        let ends = (0..<2000).map { index in
            end += UInt64(9 + LogFixture.payload(index).count)
            return LogPosition(offset: end)
        }
        var records: [Replayed] = []
        let deadline = ContinuousClock.now + .seconds(10)
        while records.count < 2000 && ContinuousClock.now < deadline {
            let before = records.count
            records += try cursor.readAll(maxBytes: 4096)
            #expect(records.last.map { $0.end <= log.log.durablePosition } ?? true)
            if records.count == before { usleep(100) }
        }
        writer.sync {}
        #expect(records == (0..<2000).map { Replayed.fixture($0, end: ends[$0]) })
    }

    @Test func resumesFromAPositionItReturned() throws {
        let fixture = try LogFixture()
        let ends = try fixture.populate(200) { $0.segmentSize = 400 }
        let log = try fixture.open { $0.segmentSize = 400 }
        defer { try? log.log.close() }

        var stopped: LogPosition?
        let first = try log.log.cursor(from: .zero)
        _ = try first.read { record in
            if record.end == ends[120] { stopped = record.end }
        }
        // A body that throws leaves the cursor at the record it threw for.
        let failing = try log.log.cursor(from: ends[120])
        #expect(throws: CancellationError.self) { try failing.read { _ in throw CancellationError() } }
        #expect(failing.position == ends[120])

        for start in [try #require(stopped), ends[0], ends[57], ends[199]] {
            let index = ends.firstIndex(of: start)!
            let cursor = try log.log.cursor(from: start)
            #expect(cursor.position == start)
            #expect(try cursor.readAll() == (index + 1..<200).map { Replayed.fixture($0, end: ends[$0]) })
        }
        // Every segment's start is a record boundary too.
        for start in try fixture.segmentStarts() {
            let cursor = try log.log.cursor(from: LogPosition(offset: start))
            #expect(try cursor.readAll().first?.end == ends.first { $0.offset > start })
        }
    }

    @Test func refusesAPositionInsideARecordOrBeyondTheDurableEnd() throws {
        let fixture = try LogFixture()
        let ends = try fixture.populate(100) { $0.segmentSize = 400 }
        let log = try fixture.open { $0.segmentSize = 400 }
        defer { try? log.log.close() }

        for inside in [ends[0].offset - 1, ends[60].offset + 3, ends[99].offset - 9, 1] {
            let error = #expect(throws: LogError.self) { try log.log.cursor(from: LogPosition(offset: inside)) }
            #expect(error?.code == .notRecordBoundary, "position \(inside)")
        }
        let beyond = #expect(throws: LogError.self) {
            try log.log.cursor(from: LogPosition(offset: ends[99].offset + 1))
        }
        #expect(beyond?.code == .invalidArgument)
    }

    @Test func reportsAPositionCompactionDeleted() throws {
        let fixture = try LogFixture()
        let log = try fixture.open { $0.segmentSize = 400 }
        defer { try? log.log.close() }
        let ends = try (0..<120).map { try log.append($0) }
        log.waitUntilDurable(ends.last!)
        let early = try log.log.cursor(from: ends[10])
        let held = try log.log.cursor(from: ends[20])
        #expect(try held.read(maxBytes: 1) { _ in } == 1)

        _ = try log.log.writeSnapshot([1], covering: ends[60])
        _ = try log.log.writeSnapshot([2], covering: ends[119])
        let oldestStart = try #require(try fixture.segmentStarts().first)
        #expect(oldestStart > ends[21].offset && oldestStart <= ends[60].offset)

        for position in [LogPosition.zero, ends[10]] {
            let error = #expect(throws: LogError.self) { try log.log.cursor(from: position) }
            #expect(error?.code == .compacted)
        }
        // Cursors whose segments went meanwhile say so too, though they hold a descriptor of one,
        // and read nothing past the gap.
        for cursor in [early, held] {
            let stale = #expect(throws: LogError.self) {
                try cursor.read { _ in Issue.record("read a record after its segment was deleted") }
            }
            #expect(stale?.code == .compacted)
        }
        // From the snapshot on, the log is all there.
        #expect(try log.log.cursor(from: ends[60]).readAll() == (61..<120).map { Replayed.fixture($0, end: ends[$0]) })
    }

    @Test func refusesToReadAfterClose() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let end = try log.append(0)
        log.waitUntilDurable(end)
        let cursor = try log.log.cursor(from: .zero)
        try log.log.close()
        let error = #expect(throws: LogError.self) { try cursor.readAll() }
        #expect(error?.code == .closed)
        #expect(throws: LogError.self) { try log.log.cursor(from: .zero) }
    }
}

/// Holds the writer thread at its next data sync while closed, so that a test can look at
/// records written but not yet durable.
final class SyncGate: Sendable {
    private let state = Mutex((closed: false, held: false))
    private let released = DispatchSemaphore(value: 0)
    private let arrived = DispatchSemaphore(value: 0)

    /// Called by the writer before each sync: waits while the gate is closed.
    func pass() {
        let wait = self.state.withLock { state in
            guard state.closed else { return false }
            state.held = true
            return true
        }
        guard wait else { return }
        self.arrived.signal()
        self.released.wait()
    }

    func close() {
        self.state.withLock { $0.closed = true }
    }

    /// Waits until the writer is held at the gate.
    func waitUntilHeld() {
        self.arrived.wait()
    }

    func open() {
        let held = self.state.withLock { state in
            defer { state = (false, false) }
            return state.held
        }
        if held { self.released.signal() }
    }
}
