import Foundation
import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsService

/// Compaction in the pipeline: the pause after failures, answers to requesters, retention
/// (logged before it is applied, so a restart expires the same messages).
@Suite struct CompactionTests {
    private static let conversation: [EventKind] = [
        .conversationUpserted(conversation: "c", kind: .direct, members: ["ann", "bob"])
    ]

    @Test func failuresPauseAutomaticCompactionTwiceAsLongEachTime() async throws {
        let fixture = try PipelineFixture { $0.compactAfterBytes = 1 }
        let start = ServiceClock.monotonicMilliseconds()
        fixture.ingest(Self.conversation)
        let unblock = try fixture.blockSnapshots()
        // The first turn finds a byte logged since the (absent) snapshot and compacts.
        try await fixture.settle(now: start)
        try await fixture.awaitCompaction(now: start)
        #expect(fixture.counter("receiptd.compactions.failed") == 1)
        #expect(fixture.pipeline.compaction.notBeforeMonotonic == start + 1000)
        try fixture.pipeline.advance(now: start + 999)
        #expect(!fixture.pipeline.compaction.isRunning, "started inside the pause")

        try fixture.pipeline.advance(now: start + 1000)
        try await fixture.awaitCompaction(now: start + 1000)
        #expect(fixture.counter("receiptd.compactions.failed") == 2)
        #expect(fixture.pipeline.compaction.notBeforeMonotonic == start + 3000)
        try fixture.pipeline.advance(now: start + 2999)
        #expect(!fixture.pipeline.compaction.isRunning, "started inside the doubled pause")
        // Intake goes on meanwhile.
        fixture.ingest([.messageSent(conversation: "c", message: "m1", sender: "ann", isSystem: false)])
        try await fixture.settle(now: start + 2999)
        #expect(try fixture.sink.ingestReplies().last?.results == [.accepted(held: false)])
        unblock()

        try fixture.pipeline.advance(now: start + 3000)
        try await fixture.awaitCompaction(now: start + 3000)
        #expect(fixture.counter("receiptd.compactions") == 1)
        #expect(fixture.counter("receiptd.compactions.failed") == 2)
        #expect(fixture.pipeline.compaction.notBeforeMonotonic == 0)

        // After a success the next failure pauses 1 s again.
        fixture.ingest([.messageSent(conversation: "c", message: "m2", sender: "ann", isSystem: false)])
        let unblockAgain = try fixture.blockSnapshots()
        defer { unblockAgain() }
        try await fixture.settle(now: start + 3001)
        try await fixture.awaitCompaction(now: start + 3001)
        #expect(fixture.counter("receiptd.compactions.failed") == 3)
        #expect(fixture.pipeline.compaction.notBeforeMonotonic == start + 4001)
    }

    @Test func aRequestedCompactionIsAnsweredWithItsOutcome() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.conversation)
        try await fixture.settle()
        let unblock = try fixture.blockSnapshots()
        let failed = try await fixture.compact()
        guard case .error(let error) = failed else { throw PipelineTestError("not an error: \(failed)") }
        #expect(error.code == .internal)
        #expect(fixture.counter("receiptd.compactions.failed") == 1)
        unblock()

        // A request is not held back by the pause that follows a failure.
        let succeeded = try await fixture.compact()
        guard case .compact(let result) = succeeded else { throw PipelineTestError("not a result: \(succeeded)") }
        #expect(result.snapshotBytes > 0)
        #expect(fixture.counter("receiptd.compactions") == 1)
    }

    @Test func retentionExpiresOldMessagesAndARestartExpiresTheSame() async throws {
        let fixture = try await Self.fixtureWithAnOldMessage(retentionSeconds: 2)
        fixture.ingest([.messageSent(conversation: "c", message: "new", sender: "ann", isSystem: false)])
        try await fixture.settle()

        // The snapshot fails, but retention was logged and applied before it was to be written.
        let unblock = try fixture.blockSnapshots(slack: 64)
        _ = try await fixture.compact()
        unblock()
        #expect(fixture.counter("receiptd.compactions.failed") == 1)
        #expect(fixture.counter("receiptd.messages.expired") == 0, "counted only with a snapshot")
        try await Self.expect(fixture, has: ["new"], lacks: ["old"])

        // A restart replays the retention record at the same point of the history.
        try fixture.restart()
        #expect(fixture.pipeline.log.latestSnapshot == nil)
        try await Self.expect(fixture, has: ["new"], lacks: ["old"])

        // A compaction that succeeds now expires nothing more (new is 2 s younger, and the
        // clock stands still) and a restart from its snapshot agrees.
        guard case .compact(let result) = try await fixture.compact() else {
            throw PipelineTestError("compaction failed")
        }
        #expect(result.messagesExpired == 0)
        try fixture.restart()
        #expect(fixture.pipeline.log.latestSnapshot != nil)
        try await Self.expect(fixture, has: ["new"], lacks: ["old"])
    }

    @Test func aSuccessfulCompactionReportsWhatRetentionExpired() async throws {
        let fixture = try await Self.fixtureWithAnOldMessage(retentionSeconds: 1)
        guard case .compact(let result) = try await fixture.compact() else {
            throw PipelineTestError("compaction failed")
        }
        #expect(result.messagesExpired == 1)
        #expect(fixture.counter("receiptd.messages.expired") == 1)
        try await Self.expect(fixture, has: [], lacks: ["old"])
    }

    /// A pipeline with `retentionSeconds` whose message "old" is just past it: its wall clock
    /// moved on by hand, so that a message sent after it stays young however long the test runs.
    private static func fixtureWithAnOldMessage(retentionSeconds: Int64) async throws -> PipelineFixture {
        let clock = ManualWallClock()
        let fixture = try PipelineFixture {
            $0.retentionSeconds = retentionSeconds
            $0.wallClock = clock.wallClock
        }
        fixture.ingest(Self.conversation)
        fixture.ingest([.messageSent(conversation: "c", message: "old", sender: "ann", isSystem: false)])
        try await fixture.settle()
        clock.advance(by: .milliseconds(retentionSeconds * 1000 + 100))
        return fixture
    }

    private static func expect(_ fixture: PipelineFixture, has present: [String], lacks absent: [String]) async throws {
        for message in present + absent {
            let query = Query.messageStatus(conversation: "c", message: message, viewer: Viewer(user: "ann"))
            switch try await fixture.ask(query) {
            case .messageStatus:
                #expect(present.contains(message), "\(message) should have expired")
            case .error(let error):
                #expect(absent.contains(message) && error.code == .notFound, "\(message): \(error)")
            case let reply:
                throw PipelineTestError("unexpected reply \(reply)")
            }
        }
    }
}
