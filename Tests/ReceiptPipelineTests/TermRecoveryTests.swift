import Foundation
import ReceiptLog
import ReceiptsCore
import ReceiptsReplication
import Testing

@testable import ReceiptsService

/// Terms in the log (deploy/REPLICATION.md, section 7.1): a restart recovers the same term
/// history from the `terms` file and the log, across a compaction, after a crash between a
/// term's record and the file, and after a cut.
@Suite struct TermRecoveryTests {
    private static let conversation: [EventKind] = [
        .conversationUpserted(conversation: "c", kind: .direct, members: ["ann", "bob"])
    ]

    private static func message(_ id: String) -> [EventKind] {
        [.messageSent(conversation: "c", message: id, sender: "ann", isSystem: false)]
    }

    /// Starts `term` at the log's end and returns the entry it should add.
    private static func startTerm(
        _ term: UInt64,
        member: String,
        in fixture: PipelineFixture
    ) throws -> TermHistory.Entry {
        let entry = TermHistory.Entry(term: term, start: fixture.pipeline.log.appendedPosition.offset, member: member)
        try fixture.pipeline.startTerm(term, member: member)
        return entry
    }

    private static func recorded(_ fixture: PipelineFixture) throws -> TermHistory? {
        try TermsFile.read(directory: fixture.configuration.dataDirectory)
    }

    @Test func theTermsSurviveACompactionAndARestart() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.conversation)
        try await fixture.settle()
        var expected = TermHistory()
        try expected.append(try Self.startTerm(1, member: "receiptd-0", in: fixture))
        fixture.ingest(Self.message("m1"))
        try await fixture.settle()
        try expected.append(try Self.startTerm(2, member: "receiptd-b-0", in: fixture))
        fixture.ingest(Self.message("m2"))
        try await fixture.settle()
        #expect(fixture.pipeline.terms == expected)
        #expect(try Self.recorded(fixture) == expected)

        // The snapshot covers both term records: replay will not see them again.
        guard case .compact = try await fixture.compact() else { throw PipelineTestError("the compaction failed") }
        try expected.append(try Self.startTerm(3, member: "receiptd-0", in: fixture))
        fixture.ingest(Self.message("m3"))
        try await fixture.settle()

        try fixture.restart()
        let replayStart = try #require(fixture.pipeline.log.recovery.snapshotPosition).offset
        #expect(replayStart > expected.entries[2].start, "the snapshot does not cover term 2's record")
        #expect(replayStart <= expected.entries[3].start, "the snapshot covers term 3's record")
        #expect(fixture.pipeline.terms == expected)
        #expect(try Self.recorded(fixture) == expected)
        // Term records change no receipt state.
        for id in ["m1", "m2", "m3"] {
            #expect(fixture.pipeline.engine.status(conversation: "c", message: id)?.status == .notDelivered)
        }
    }

    @Test(arguments: [false, true])
    func aCrashBetweenATermRecordAndTheFileIsRepairedFromTheLog(fileLost: Bool) async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.conversation)
        try await fixture.settle()
        var expected = TermHistory()
        try expected.append(try Self.startTerm(1, member: "receiptd-0", in: fixture))
        fixture.ingest(Self.message("m1"))
        try await fixture.settle()
        let before = expected

        // Term 2's record is durable, and the process dies before the file is written.
        let start = fixture.pipeline.log.appendedPosition.offset
        _ = try fixture.pipeline.append(.termStarted(term: 2, previousTerm: 1, member: "receiptd-b-0")).get()
        try fixture.pipeline.log.flush()
        try expected.append(TermHistory.Entry(term: 2, start: start, member: "receiptd-b-0"))
        #expect(try Self.recorded(fixture) == before)
        if fileLost {
            try FileManager.default.removeItem(atPath: fixture.configuration.dataDirectory + "/terms")
        }

        try fixture.restart()
        #expect(fixture.pipeline.terms == expected)
        #expect(try Self.recorded(fixture) == expected)
    }

    @Test func aTermCutFromTheLogLeavesTheHistory() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.conversation)
        try await fixture.settle()
        var expected = TermHistory()
        try expected.append(try Self.startTerm(1, member: "receiptd-0", in: fixture))
        fixture.ingest(Self.message("m1"))
        try await fixture.settle()
        let cut = fixture.pipeline.log.appendedPosition
        _ = try Self.startTerm(2, member: "receiptd-b-0", in: fixture)
        fixture.ingest(Self.message("m2"))
        try await fixture.settle()

        // An old primary cuts its log back to where its history parts from the new primary's
        // and dies before it rewrites the file: the file is ahead of the log.
        fixture.pipeline.close()
        try ReceiptLog.truncate(directory: fixture.configuration.dataDirectory, to: cut)
        #expect(try Self.recorded(fixture)?.last.term == 2)

        try fixture.restart()
        #expect(fixture.pipeline.terms == expected)
        #expect(try Self.recorded(fixture) == expected)
        #expect(fixture.pipeline.engine.status(conversation: "c", message: "m2") == nil)
    }

    @Test func aTermThatDoesNotGrowIsRefusedAndNothingIsWritten() throws {
        let fixture = try PipelineFixture()
        try fixture.pipeline.startTerm(2, member: "receiptd-0")
        let end = fixture.pipeline.log.appendedPosition
        #expect(throws: ServiceError.self) { try fixture.pipeline.startTerm(2, member: "receiptd-b-0") }
        #expect(throws: ServiceError.self) { try fixture.pipeline.startTerm(3, member: "receiptd b") }
        #expect(fixture.pipeline.log.appendedPosition == end)
        #expect(fixture.pipeline.terms.last.term == 2)
    }

    @Test func aLogWithoutTermsHasTermZeroAndItsFile() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.conversation)
        try await fixture.settle()
        #expect(fixture.pipeline.terms == TermHistory())
        try fixture.restart()
        #expect(fixture.pipeline.terms == TermHistory())
        #expect(try Self.recorded(fixture) == TermHistory())
    }
}
