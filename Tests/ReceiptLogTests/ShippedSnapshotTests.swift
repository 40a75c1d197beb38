import Foundation
import Testing

@testable import ReceiptLog

/// A primary's newest snapshot, opened for shipping: the file as it is on disk, readable
/// whatever compaction does after the open, with the log pinned at its position.
struct ShippedSnapshotTests {
    /// A log in small segments with snapshots at records 39's and 79's ends, open.
    struct Primary {
        let fixture = try! LogFixture()
        let log: OpenLog
        var ends: [LogPosition]

        init() throws {
            let log = try self.fixture.open { $0.segmentSize = 400 }
            self.log = log
            self.ends = try (0..<120).map { try log.append($0) }
            _ = try self.log.log.writeSnapshot(Self.state(39), covering: self.ends[39])
            _ = try self.log.log.writeSnapshot(Self.state(79), covering: self.ends[79])
        }

        static func state(_ index: Int) -> [UInt8] {
            Array("state up to record \(index)".utf8) + [UInt8](repeating: UInt8(index), count: 3000)
        }

        /// Appends 40 more records and writes a snapshot at the last one's end.
        mutating func compact() throws {
            let log = self.log
            let first = self.ends.count
            let more = try (first..<(first + 40)).map { try log.append($0) }
            self.ends += more
            _ = try self.log.log.writeSnapshot(Self.state(first + 39), covering: self.ends.last!)
        }
    }

    /// Reads the whole file through `snapshot` in chunks of `chunk` bytes.
    static func readAll(_ snapshot: ShippedSnapshot, chunk: Int = 1000) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let offset = UInt64(bytes.count)
            let count = try buffer.withUnsafeMutableBytes { try snapshot.read(at: offset, into: $0) }
            if count == 0 { return bytes }
            bytes += buffer[..<count]
        }
    }

    @Test func shipsTheNewestSnapshotFileAsItIsOnDiskAndPinsItsPosition() throws {
        let primary = try Primary()
        defer { try? primary.log.log.close() }
        let snapshot = try #require(try primary.log.log.openNewestSnapshot())
        let name = LogFileName.snapshot(position: primary.ends[79].offset)
        #expect(snapshot.position == primary.ends[79])
        #expect(snapshot.pin.position == primary.ends[79])
        #expect(snapshot.fileBytes == UInt64(try primary.fixture.read(name).count))
        #expect(try Self.readAll(snapshot) == primary.fixture.read(name))
        #expect(try Self.readAll(snapshot, chunk: 1 << 20) == primary.fixture.read(name))

        var tail = [UInt8](repeating: 0, count: 100)
        let last = try tail.withUnsafeMutableBytes { try snapshot.read(at: snapshot.fileBytes - 10, into: $0) }
        #expect(last == 10)
        #expect(try tail.withUnsafeMutableBytes { try snapshot.read(at: snapshot.fileBytes + 5, into: $0) } == 0)

        snapshot.close()
        snapshot.close()
        let closed = #expect(throws: LogError.self) {
            try tail.withUnsafeMutableBytes { try snapshot.read(at: 0, into: $0) }
        }
        #expect(closed?.code == .closed)
        #expect(snapshot.pin.position == primary.ends[79], "closing leaves the pin to the shipper")
    }

    @Test func aCompactionAfterTheOpenCannotTakeTheBytesAway() throws {
        var primary = try Primary()
        defer { try? primary.log.log.close() }
        let snapshot = try #require(try primary.log.log.openNewestSnapshot())
        let position = primary.ends[79]
        let name = LogFileName.snapshot(position: position.offset)
        // The second compaction after this snapshot deletes its file.
        try primary.compact()
        try primary.compact()
        #expect(!(try primary.fixture.files().contains(name)))

        let bytes = try Self.readAll(snapshot)
        #expect(UInt64(bytes.count) == snapshot.fileBytes)
        let payload = bytes.withUnsafeBytes { SnapshotFile.payload(in: $0, position: position.offset).map(Array.init) }
        #expect(payload == Primary.state(79))
        // The pin kept the records from the snapshot on, for the standby to continue with.
        primary.log.waitUntilDurable(primary.ends.last!)
        #expect(
            try primary.log.log.cursor(from: position).readAll()
                == (80..<primary.ends.count).map { Replayed.fixture($0, end: primary.ends[$0]) }
        )
    }

    @Test func aFileUnlinkedBeforeTheOpenIsReplacedByTheNewNewest() throws {
        var primary = try Primary()
        defer { try? primary.log.log.close() }
        var compactions = 0
        let log = primary.log.log
        let snapshot = try #require(
            try log.openNewestSnapshot {
                guard compactions == 0 else { return }
                compactions += 1
                do {
                    try primary.compact()
                    try primary.compact()
                } catch {
                    Issue.record("compaction failed: \(error)")
                }
            }
        )
        #expect(compactions == 1)
        let newest = primary.ends.last!
        #expect(snapshot.position == newest)
        #expect(try Self.readAll(snapshot) == primary.fixture.read(LogFileName.snapshot(position: newest.offset)))
        #expect(primary.log.log.writer.state.withLock { Array($0.pins.values) } == [newest.offset])
    }

    @Test func aNewestFileThatIsMissingIsAnError() throws {
        let primary = try Primary()
        defer { try? primary.log.log.close() }
        try FileManager.default.removeItem(
            atPath: primary.fixture.path(LogFileName.snapshot(position: primary.ends[79].offset))
        )
        let error = #expect(throws: LogError.self) { try primary.log.log.openNewestSnapshot() }
        #expect(error?.code == .io)
        #expect((error?.cause as? SystemCallError)?.errno == ENOENT)
        #expect(primary.log.log.writer.state.withLock { $0.pins.isEmpty })
    }

    @Test func noSnapshotGivesNilAndAClosedLogRefuses() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        _ = try log.append(1)
        #expect(try log.log.openNewestSnapshot() == nil)
        try log.log.close()
        let error = #expect(throws: LogError.self) { try log.log.openNewestSnapshot() }
        #expect(error?.code == .closed)
    }

    @Test func aRecoveredSnapshotIsShippedToo() throws {
        let primary = try Primary()
        try primary.log.log.close()
        let reopened = try primary.fixture.open { $0.segmentSize = 400 }
        defer { try? reopened.log.close() }
        let snapshot = try #require(try reopened.log.openNewestSnapshot())
        #expect(snapshot.position == primary.ends[79])
        #expect(
            try Self.readAll(snapshot) == primary.fixture.read(LogFileName.snapshot(position: primary.ends[79].offset))
        )
    }
}
