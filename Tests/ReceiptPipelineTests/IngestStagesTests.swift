import Testing

@testable import ReceiptLog
@testable import ReceiptsService

/// How a traced frame's stages are found in the log writer's group commits: the commit that
/// wrote it and the one that synced it (one under `--fsync always`, two under an interval, no
/// sync under `none`), none once the timeline forgot it or before the writer reported it, and
/// stages that add up to the time from received to completed.
@Suite struct IngestStagesTests {
    private static func commit(
        end: UInt64,
        started: UInt64,
        finished: UInt64,
        syncNanoseconds: Int64?
    ) -> GroupCommit {
        GroupCommit(
            records: syncNanoseconds == nil ? 1 : 0,
            syncDuration: syncNanoseconds.map { .nanoseconds($0) },
            end: LogPosition(offset: end),
            startedNanoseconds: started,
            finishedNanoseconds: finished
        )
    }

    @Test func oneCommitWritesAndSyncsUnderAlways() throws {
        let timeline = CommitTimeline()
        timeline.record(Self.commit(end: 100, started: 1_000, finished: 1_500, syncNanoseconds: 300))
        timeline.record(Self.commit(end: 200, started: 2_000, finished: 2_500, syncNanoseconds: 300))
        let found = try #require(timeline.commits(covering: LogPosition(offset: 150)))
        #expect(found.written.end.offset == 200)
        #expect(found.synced?.end.offset == 200)
        #expect(timeline.commits(covering: LogPosition(offset: 100))?.written.end.offset == 100)
    }

    @Test func anIntervalSyncsWhatAnEarlierCommitWrote() throws {
        let timeline = CommitTimeline()
        timeline.record(Self.commit(end: 100, started: 1_000, finished: 1_200, syncNanoseconds: nil))
        timeline.record(Self.commit(end: 180, started: 1_300, finished: 1_400, syncNanoseconds: nil))
        timeline.record(Self.commit(end: 180, started: 5_000, finished: 5_400, syncNanoseconds: 400))
        let found = try #require(timeline.commits(covering: LogPosition(offset: 60)))
        #expect(found.written.startedNanoseconds == 1_000)
        #expect(found.synced?.startedNanoseconds == 5_000)
    }

    @Test func nothingSyncedUnderNoneAndNothingFoundBeforeTheWrite() throws {
        let timeline = CommitTimeline()
        timeline.record(Self.commit(end: 100, started: 1_000, finished: 1_200, syncNanoseconds: nil))
        let found = try #require(timeline.commits(covering: LogPosition(offset: 100)))
        #expect(found.synced == nil)
        #expect(timeline.commits(covering: LogPosition(offset: 101)) == nil, "not written yet")
    }

    @Test func aForgottenCommitFindsNothingRatherThanALaterOne() {
        let timeline = CommitTimeline()
        for index in 0...CommitTimeline.capacity {
            let end = UInt64(index + 1) * 100
            timeline.record(Self.commit(end: end, started: end, finished: end + 10, syncNanoseconds: 5))
        }
        #expect(timeline.commits(covering: LogPosition(offset: 50)) == nil, "its commit was the first forgotten")
        #expect(timeline.commits(covering: LogPosition(offset: 100)) == nil)
        #expect(timeline.commits(covering: LogPosition(offset: 150))?.written.end.offset == 200)
    }

    @Test func theStagesAddUpFromReceivedToReplied() throws {
        let timeline = CommitTimeline()
        timeline.record(Self.commit(end: 400, started: 1_300, finished: 2_000, syncNanoseconds: 500))
        let trace = IngestStageTrace(received: 1_000, applied: 1_100, appended: 1_150)
        let stages = try #require(
            trace.stages(position: LogPosition(offset: 400), completed: 2_600, replied: 2_650, timeline: timeline)
        )
        #expect(stages.map(\.0) == [.apply, .append, .commitWait, .write, .fdatasync, .completion, .reply])
        #expect(stages.map(\.1) == [100, 50, 150, 200, 500, 600, 50])
        #expect(stages.map(\.1).reduce(0, +) == 2_650 - 1_000)
    }

    @Test func withoutASyncTheCompletionStartsAtTheWrite() throws {
        let timeline = CommitTimeline()
        timeline.record(Self.commit(end: 400, started: 1_300, finished: 1_400, syncNanoseconds: nil))
        let trace = IngestStageTrace(received: 1_000, applied: 1_100, appended: 1_150)
        let stages = try #require(
            trace.stages(position: LogPosition(offset: 400), completed: 1_900, replied: 1_950, timeline: timeline)
        )
        #expect(stages.map(\.0) == [.apply, .append, .commitWait, .write, .completion, .reply])
        #expect(stages.map(\.1) == [100, 50, 150, 100, 500, 50])
    }
}
