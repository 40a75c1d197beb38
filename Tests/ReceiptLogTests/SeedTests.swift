import Foundation
import Testing

@testable import ReceiptLog

/// A standby seeded from a primary's snapshot: the snapshot arrives into a temporary file, the
/// seed replaces the log with it durably, and a crash at any step opens to the old log, an
/// empty one or the seeded one, never a mix.
struct SeedTests {
    /// A primary with 120 records and a snapshot at record 79's end, open, and a standby
    /// directory holding an old log of its own (records, two snapshots, leftovers).
    struct Setup {
        let primary: ShippedSnapshotTests.Primary
        let standby = try! LogFixture()
        /// The records of the standby's old log, as they replay.
        let oldRecords: [Replayed]

        init(oldLog: Bool = true) throws {
            self.primary = try ShippedSnapshotTests.Primary()
            guard oldLog else {
                self.oldRecords = []
                return
            }
            let log = try self.standby.open { $0.segmentSize = 300 }
            let ends = try (500..<560).map { try log.append($0) }
            _ = try log.log.writeSnapshot([5], covering: ends[19])
            _ = try log.log.writeSnapshot([6], covering: ends[39])
            try log.log.close()
            self.oldRecords = try self.standby.replayAll()
            let leftover = LogFileName.snapshot(position: ends[59].offset)
            try self.standby.write(LogFileName.temporary(forSnapshot: leftover), [1, 2, 3])
            try self.standby.write(LogFileName.quarantined(forSnapshot: leftover), [4, 5, 6])
        }

        var position: LogPosition { self.primary.ends[79] }

        /// Ships the primary's newest snapshot into the standby's directory, in 1000-byte chunks.
        func receive(chunks limit: Int = .max) throws -> IncomingSnapshot {
            let shipped = try #require(try self.primary.log.log.openNewestSnapshot())
            let incoming = try IncomingSnapshot(
                directory: self.standby.directory,
                position: shipped.position,
                fileBytes: shipped.fileBytes
            )
            var buffer = [UInt8](repeating: 0, count: 1000)
            var chunks = 0
            while chunks < limit {
                let offset = incoming.bytesWritten
                let count = try buffer.withUnsafeMutableBytes { try shipped.read(at: offset, into: $0) }
                if count == 0 { break }
                try buffer.withUnsafeBytes {
                    try incoming.write(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: offset)
                }
                chunks += 1
            }
            return incoming
        }

        /// Opens the standby's log: its recovery report and replayed records, then closes it.
        func reopen() throws -> (recovery: RecoveryReport, records: [Replayed], snapshot: [UInt8]?) {
            let log = try self.standby.open()
            defer { try? log.log.close() }
            return (log.log.recovery, try log.replayAll(), log.log.latestSnapshot?.payload)
        }

        /// The log files (segments, snapshots, temporaries, set-aside ones) in the standby's
        /// directory.
        func logFiles() throws -> [String] {
            try self.standby.files().filter { $0.hasPrefix("segment-") || $0.hasPrefix("snapshot-") }
        }
    }

    @Test(arguments: [true, false])
    func aSeededDirectoryOpensAtTheSnapshotAndFollowsThePrimary(oldLog: Bool) throws {
        let setup = try Setup(oldLog: oldLog)
        defer { try? setup.primary.log.log.close() }
        let incoming = try setup.receive()
        #expect(incoming.isComplete)
        var completed = false
        try ReceiptLog.seed(directory: setup.standby.directory, from: incoming) { () throws(LogError) in
            #expect((try? setup.standby.files().contains(LogFileName.seedingMarker)) == true)
            completed = true
        }
        #expect(completed)
        #expect(try setup.logFiles() == [LogFileName.snapshot(position: setup.position.offset)])
        #expect(!(try setup.standby.files().contains(LogFileName.seedingMarker)))
        incoming.discard()
        #expect(try setup.logFiles() == [LogFileName.snapshot(position: setup.position.offset)])

        let standby = try setup.standby.open()
        defer { try? standby.log.close() }
        #expect(standby.log.recovery.snapshotPosition == setup.position)
        #expect(!standby.log.recovery.discardedInterruptedSeed)
        #expect(standby.log.appendedPosition == setup.position)
        #expect(
            standby.log.withLatestSnapshot { position, payload in
                position == setup.position && Array(payload) == ShippedSnapshotTests.Primary.state(79)
            } == true
        )
        #expect(try standby.replayAll().isEmpty)

        // The primary's records from the snapshot on follow, at the primary's positions.
        let primary = setup.primary.log
        primary.waitUntilDurable(setup.primary.ends.last!)
        let cursor = try primary.log.cursor(from: setup.position)
        while try cursor.readRaw({ bytes, start, _ in _ = try standby.log.appendShipped(bytes, at: start) }) > 0 {}
        #expect(standby.log.appendedPosition == setup.primary.ends.last)
        standby.waitUntilDurable(setup.primary.ends.last!)
        let expected = (80..<120).map { Replayed.fixture($0, end: setup.primary.ends[$0]) }
        #expect(try standby.log.cursor(from: setup.position).readAll() == expected)
        let one = try LogFixture.payload(7).withUnsafeBytes {
            try standby.log.append(type: 7, payload: $0, at: setup.primary.ends.last!)
        }
        try standby.log.close()
        #expect(try setup.reopen().records == expected + [Replayed(type: 7, payload: LogFixture.payload(7), end: one)])
    }

    @Test func seedingIntoADirectoryThatDoesNotExistYet() throws {
        let setup = try Setup(oldLog: false)
        defer { try? setup.primary.log.log.close() }
        #expect(!FileManager.default.fileExists(atPath: setup.standby.directory))
        try ReceiptLog.seed(directory: setup.standby.directory, from: try setup.receive()) {}
        let reopened = try setup.reopen()
        #expect(reopened.recovery.snapshotPosition == setup.position)
        #expect(reopened.snapshot == ShippedSnapshotTests.Primary.state(79))
    }

    @Test func seedingWhileTheLogIsOpenIsRefused() throws {
        let setup = try Setup()
        defer { try? setup.primary.log.log.close() }
        // Received while the log is open (opening removes a transfer left from before it).
        let open = try setup.standby.open()
        let incoming = try setup.receive()
        let before = try setup.standby.contents()
        let error = #expect(throws: LogError.self) {
            try ReceiptLog.seed(directory: setup.standby.directory, from: incoming) {
                Issue.record("seeded an open log")
            }
        }
        #expect(error?.code == .locked)
        #expect(try setup.standby.contents() == before)
        try open.log.close()
        // The same transfer seeds once the log is closed.
        try ReceiptLog.seed(directory: setup.standby.directory, from: incoming) {}
        #expect(try setup.reopen().recovery.snapshotPosition == setup.position)
    }

    enum BadIncoming: CaseIterable {
        case incomplete, flippedPayload, flippedHeader, otherPosition, otherDirectory, discarded, alreadySeeded
    }

    @Test(arguments: BadIncoming.allCases)
    func aBadIncomingSnapshotChangesNothing(bad: BadIncoming) throws {
        let setup = try Setup()
        defer { try? setup.primary.log.log.close() }
        let other = try LogFixture()
        var incoming = try setup.receive(chunks: bad == .incomplete ? 2 : .max)
        var expected: LogError.Code = .invalidSnapshot
        switch bad {
        case .incomplete:
            #expect(!incoming.isComplete)
        case .flippedPayload, .flippedHeader:
            let name = incoming.name
            var bytes = try setup.standby.read(name)
            bytes[bad == .flippedPayload ? bytes.count - 1 : 13] ^= 0x01
            try setup.standby.write(name, bytes)
        case .otherPosition:
            let shipped = try #require(try setup.primary.log.log.openNewestSnapshot())
            let bytes = try Array(ShippedSnapshotTests.readAll(shipped))
            incoming = try IncomingSnapshot(
                directory: setup.standby.directory,
                position: LogPosition(offset: shipped.position.offset - 1),
                fileBytes: shipped.fileBytes
            )
            try bytes.withUnsafeBytes { try incoming.write($0, at: 0) }
        case .otherDirectory:
            expected = .invalidArgument
        case .discarded:
            incoming.discard()
            expected = .closed
        case .alreadySeeded:
            let shipped = try #require(try setup.primary.log.log.openNewestSnapshot())
            incoming = try IncomingSnapshot(
                directory: other.directory,
                position: shipped.position,
                fileBytes: shipped.fileBytes
            )
            try ShippedSnapshotTests.readAll(shipped).withUnsafeBytes { try incoming.write($0, at: 0) }
            try ReceiptLog.seed(directory: other.directory, from: incoming) {}
            expected = .closed
        }
        let before = try setup.standby.contents()
        let directory = bad == .otherDirectory ? setup.standby.directory + "-other" : incoming.directory
        let error = #expect(throws: LogError.self) {
            try ReceiptLog.seed(directory: directory, from: incoming) { Issue.record("seeded \(bad)") }
        }
        #expect(error?.code == expected)
        #expect(try setup.standby.contents() == before)
        #expect(try setup.reopen().records == setup.oldRecords)
    }

    /// A crash part-way through a seed, as the directory holds it afterwards.
    enum Crash: CaseIterable {
        /// The snapshot arrived (all of it or part), the marker not yet written.
        case receivedBeforeTheMarker
        /// The marker written, nothing deleted yet.
        case markedBeforeDeleting
        /// The marker written, some of the old files deleted.
        case markedHalfDeleted
        /// The snapshot renamed into place, the service's files written, the marker still there.
        case seededButMarked
    }

    @Test(arguments: Crash.allCases)
    func aCrashPartWayOpensToTheOldLogOrAnEmptyOneNeverAMix(crash: Crash) throws {
        let setup = try Setup()
        defer { try? setup.primary.log.log.close() }
        let incoming = try setup.receive()
        switch crash {
        case .receivedBeforeTheMarker:
            break
        case .markedBeforeDeleting:
            try setup.standby.write(LogFileName.seedingMarker, [])
        case .markedHalfDeleted:
            try setup.standby.write(LogFileName.seedingMarker, [])
            let files = try setup.logFiles().filter { $0 != incoming.name }
            for name in files.enumerated().filter({ $0.offset % 2 == 0 }).map(\.element) {
                try FileManager.default.removeItem(atPath: setup.standby.path(name))
            }
        case .seededButMarked:
            let error = #expect(throws: LogError.self) {
                try ReceiptLog.seed(directory: setup.standby.directory, from: incoming) { () throws(LogError) in
                    #expect(FileManager.default.createFile(atPath: setup.standby.path("terms"), contents: Data([1])))
                    throw LogError(code: .io, message: "the service could not write its files")
                }
            }
            #expect(error?.message == "the service could not write its files")
            #expect(try setup.logFiles() == [LogFileName.snapshot(position: setup.position.offset)])
        }
        let marked = try setup.standby.files().contains(LogFileName.seedingMarker)
        #expect(marked == (crash != .receivedBeforeTheMarker))
        let verified = try ReceiptLog.verify(directory: setup.standby.directory)
        #expect(verified.interruptedSeed == marked)
        #expect(!verified.isClean)

        let reopened = try setup.reopen()
        #expect(reopened.recovery.discardedInterruptedSeed == marked)
        #expect(!(try setup.standby.files().contains(LogFileName.seedingMarker)))
        if marked {
            #expect(reopened.records.isEmpty)
            #expect(reopened.snapshot == nil)
            #expect(reopened.recovery.snapshotPosition == nil)
            #expect(reopened.recovery.endPosition == .zero)
            #expect(try setup.logFiles() == [LogFileName.segment(start: 0)])
            #expect(
                setup.standby.logs.entries.contains {
                    $0.level == .warning && $0.message.contains("discarded an interrupted seed")
                }
            )
        } else {
            #expect(reopened.records == setup.oldRecords)
            #expect(reopened.recovery.removedTemporaryFiles.contains(incoming.name))
        }
        #expect(try ReceiptLog.verify(directory: setup.standby.directory).isClean)
    }

    @Test func incomingChunksMustArriveInOrderAndWithinTheFile() throws {
        let fixture = try LogFixture()
        let short = #expect(throws: LogError.self) {
            try IncomingSnapshot(
                directory: fixture.directory,
                position: .zero,
                fileBytes: UInt64(SnapshotFile.headerSize - 1)
            )
        }
        #expect(short?.code == .invalidArgument)

        let incoming = try IncomingSnapshot(
            directory: fixture.directory,
            position: LogPosition(offset: 7),
            fileBytes: 100
        )
        let chunk = [UInt8](repeating: 0xAB, count: 60)
        try chunk.withUnsafeBytes { try incoming.write($0, at: 0) }
        for (offset, count) in [(0, 10), (59, 10), (61, 10), (60, 41)] {
            let error = #expect(throws: LogError.self) {
                try chunk.withUnsafeBytes {
                    try incoming.write(UnsafeRawBufferPointer(rebasing: $0[..<count]), at: UInt64(offset))
                }
            }
            #expect(error?.code == .invalidArgument, "\(count) bytes at \(offset)")
        }
        #expect(!incoming.isComplete)
        try chunk.withUnsafeBytes { try incoming.write(UnsafeRawBufferPointer(rebasing: $0[..<40]), at: 60) }
        #expect(incoming.isComplete)
        #expect(incoming.bytesWritten == 100)
        #expect(try fixture.read(incoming.name) == [UInt8](repeating: 0xAB, count: 100))
        #expect(LogFileName.parse(incoming.name) == .snapshotTemporary)

        // A new transfer of the same snapshot starts the file over.
        let again = try IncomingSnapshot(directory: fixture.directory, position: LogPosition(offset: 7), fileBytes: 100)
        #expect(try fixture.read(again.name).isEmpty)
        again.discard()
        again.discard()
        #expect(!(try fixture.files().contains(again.name)))
        let discarded = #expect(throws: LogError.self) { try chunk.withUnsafeBytes { try again.write($0, at: 0) } }
        #expect(discarded?.code == .closed)
    }

    @Test func anAbandonedTransferIsRemovedWhenTheLogOpens() throws {
        let setup = try Setup()
        defer { try? setup.primary.log.log.close() }
        let incoming = try setup.receive(chunks: 2)
        #expect(try ReceiptLog.verify(directory: setup.standby.directory).temporaryFiles.contains(incoming.name))
        let reopened = try setup.reopen()
        #expect(reopened.recovery.removedTemporaryFiles.contains(incoming.name))
        #expect(reopened.records == setup.oldRecords)
    }

    @Test func theSeedingFileNamesAreKnown() {
        #expect(LogFileName.parse(LogFileName.seedingMarker) == .seedingMarker)
        #expect(LogFileName.parse(LogFileName.incoming(snapshotAt: 42)) == .snapshotTemporary)
        #expect(
            LogFileName.isQuarantinedSnapshot(LogFileName.quarantined(forSnapshot: LogFileName.snapshot(position: 42)))
        )
        #expect(!LogFileName.isQuarantinedSnapshot("terms.corrupt"))
        #expect(!LogFileName.isQuarantinedSnapshot(LogFileName.snapshot(position: 42)))
    }
}
