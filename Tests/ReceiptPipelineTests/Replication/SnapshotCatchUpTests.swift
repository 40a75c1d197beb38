import Foundation
import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsService

/// A standby that lacks records the primary compacted away catches up from the primary's newest
/// snapshot (deploy/REPLICATION.md, section 4.2); one whose log holds a tail the primary's
/// history lacks cuts it back (section 7.5); the standby compacts its own log.
@Suite struct SnapshotCatchUpTests {
    /// Ingests, compacts, twice over, and ingests again: the first segment is gone.
    static func compactedPrimary() async throws -> PipelineFixture {
        let fixture = try PipelineFixture()
        try await ShippingTests.ingest([ShippingTests.conversation] + ShippingTests.traffic(100), into: fixture)
        for round in 1...2 {
            guard case .compact = try await fixture.compact() else {
                throw PipelineTestError("compaction \(round) failed")
            }
            try await ShippingTests.ingest(ShippingTests.traffic(50, from: 100 * round), into: fixture)
        }
        #expect(throws: LogError.self) { try fixture.pipeline.log.cursor(from: .zero) }
        return fixture
    }

    @Test func aNewStandbyIsSeededFromTheSnapshotThenFollows() async throws {
        let pair = try ReplicationPair(primary: try await Self.compactedPrimary())
        try pair.start()
        try await pair.catchUp()
        let chunks = pair.shipped.compactMap { message -> ReplicationMessage.SnapshotChunk? in
            if case .snapshot(let chunk) = message { return chunk }
            return nil
        }
        #expect(!chunks.isEmpty)
        #expect(pair.standby.log.recovery.snapshotPosition?.offset == chunks.first?.position)
        #expect(pair.standby.engine.encodedState() == pair.primary.pipeline.engine.encodedState())
        try await ShippingTests.ingest(ShippingTests.traffic(30, from: 500), into: pair.primary)
        try await pair.catchUp()
        #expect(pair.standby.engine.encodedState() == pair.primary.pipeline.engine.encodedState())
        #expect(
            ReplaySettings.recordedText(directory: pair.standbyConfiguration.dataDirectory)
                == ReplaySettings.recordedText(directory: pair.primary.configuration.dataDirectory)
        )
    }

    @Test func theSnapshotCarriesTheTermsBeforeIt() async throws {
        let primary = try PipelineFixture()
        try await ShippingTests.ingest([ShippingTests.conversation], into: primary)
        try primary.pipeline.startTerm(1, member: "receiptd-0")
        try await ShippingTests.ingest(ShippingTests.traffic(40), into: primary)
        for round in 1...2 {
            guard case .compact = try await primary.compact() else {
                throw PipelineTestError("compaction \(round) failed")
            }
            try await ShippingTests.ingest(ShippingTests.traffic(10, from: 40 * round), into: primary)
        }
        let pair = try ReplicationPair(primary: primary)
        try pair.start()
        try await pair.catchUp()
        #expect(pair.standby.applier.terms == primary.pipeline.terms)
        #expect(try TermsFile.read(directory: pair.standbyConfiguration.dataDirectory) == primary.pipeline.terms)
    }

    @Test func aStandbyWithATailThePrimaryLacksCutsItBack() async throws {
        let primary = try PipelineFixture()
        try await ShippingTests.ingest([ShippingTests.conversation] + ShippingTests.traffic(30), into: primary)
        try await primary.waitUntilDurable()
        // The standby's directory: a copy of the primary's log so far, then a term of its own.
        var template = Array("/tmp/receipt-standby-test-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        primary.pipeline.close()
        try FileManager.default.copyItem(atPath: primary.configuration.dataDirectory, toPath: root + "/data")
        try primary.restart()
        let diverged = try PipelineFixture { $0.dataDirectory = root + "/data" }
        try diverged.pipeline.startTerm(1, member: "receiptd-b-0")
        try await ShippingTests.ingest(ShippingTests.traffic(20, from: 1000), into: diverged)
        diverged.pipeline.close()
        // The primary starts term 2 at the same point and goes on.
        let split = primary.pipeline.log.appendedPosition
        try primary.pipeline.startTerm(2, member: "receiptd-0")
        try await ShippingTests.ingest(ShippingTests.traffic(20, from: 30), into: primary)

        let pair = try ReplicationPair(primary: primary, standbyDirectory: root)
        #expect(pair.standby.log.appendedPosition > split)
        try pair.start()
        try await pair.catchUp()
        guard case .accepted(let accepted) = pair.shipped.first else { throw PipelineTestError("not accepted") }
        #expect(accepted.continueAt == split.offset)
        #expect(pair.standby.applier.terms == primary.pipeline.terms)
        #expect(pair.standby.engine.encodedState() == primary.pipeline.engine.encodedState())
    }

    @Test func theStandbyCompactsItsOwnLogAtThePositionApplied() async throws {
        let primary = try PipelineFixture { $0.compactAfterBytes = 4096 }
        let pair = try ReplicationPair(primary: primary, standbyConfiguration: { $0.compactAfterBytes = 4096 })
        try pair.start()
        for round in 0..<5 {
            try await ShippingTests.ingest(
                (round == 0 ? [ShippingTests.conversation] : []) + ShippingTests.traffic(40, from: 40 * round),
                into: primary
            )
            try await pair.catchUp()
        }
        let standbyDirectory = pair.standbyConfiguration.dataDirectory
        try PipelineFixture.poll(seconds: 5) {
            guard pair.standby.log.newestSnapshotPosition == nil else { return true }
            try pair.standby.advance(now: pair.now)
            return false
        } failure: {
            "the standby wrote no snapshot in 5 s"
        }
        let snapshot = try #require(pair.standby.log.newestSnapshotPosition)
        #expect(snapshot <= pair.standby.applied)
        // A restart recovers the same state from the standby's own snapshot and log.
        pair.standby.close()
        pair.standby = try StandbyReplica(
            configuration: pair.standbyConfiguration,
            settings: pair.settings,
            logger: ReplicationPair.logger,
            counters: ServiceCounters(),
            wake: {}
        )
        #expect(pair.standby.log.recovery.snapshotPosition != nil)
        #expect(FileManager.default.fileExists(atPath: standbyDirectory))
        #expect(pair.standby.engine.encodedState() == primary.pipeline.engine.encodedState())
    }
}
