import Testing

@testable import ReceiptLog
@testable import ReceiptsService

/// How a traced frame's stages are found: the group commit that wrote it (the first that wrote
/// up to its end), none once the timeline forgot that commit or before the writer reported it,
/// and stages that add up from received to replied, with an fdatasync only when that step synced.
@Suite struct IngestStagesTests {
    private static func commit(end: UInt64, started: UInt64, written: UInt64, finished: UInt64) -> GroupCommit {
        GroupCommit(
            records: 1,
            syncDuration: finished > written ? .nanoseconds(Int64(finished - written)) : nil,
            end: LogPosition(offset: end),
            startedNanoseconds: started,
            writtenNanoseconds: written,
            finishedNanoseconds: finished
        )
    }

    @Test func theFirstCommitThatWroteUpToAFramesEndWroteIt() {
        let timeline = CommitTimeline()
        timeline.record(Self.commit(end: 100, started: 1_000, written: 1_100, finished: 1_500))
        timeline.record(Self.commit(end: 200, started: 2_000, written: 2_100, finished: 2_500))
        #expect(timeline.commit(covering: LogPosition(offset: 150))?.end.offset == 200)
        #expect(timeline.commit(covering: LogPosition(offset: 100))?.end.offset == 100)
        #expect(timeline.commit(covering: LogPosition(offset: 201)) == nil, "not written yet")
    }

    @Test func aForgottenCommitFindsNothingRatherThanALaterOne() {
        let timeline = CommitTimeline()
        for index in 0...CommitTimeline.capacity {
            let end = UInt64(index + 1) * 100
            timeline.record(Self.commit(end: end, started: end, written: end + 5, finished: end + 10))
        }
        #expect(timeline.commit(covering: LogPosition(offset: 50)) == nil, "its commit was the first forgotten")
        #expect(timeline.commit(covering: LogPosition(offset: 100)) == nil)
        #expect(timeline.commit(covering: LogPosition(offset: 150))?.end.offset == 200)
    }

    @Test func theStagesAddUpFromReceivedToReplied() {
        let commit = Self.commit(end: 400, started: 1_300, written: 1_500, finished: 2_000)
        let trace = IngestStageTrace(received: 1_000, applied: 1_100, appended: 1_150)
        let stages = trace.stages(writtenBy: commit, completed: 2_600, replied: 2_650)
        #expect(stages.map(\.0) == [.apply, .append, .commitWait, .write, .fdatasync, .completion, .reply])
        #expect(stages.map(\.1) == [100, 50, 150, 200, 500, 600, 50])
        #expect(stages.map(\.1).reduce(0, +) == 2_650 - 1_000)
    }

    /// Under `--fsync interval` or `none` a frame is durable once written: a write step that did
    /// not sync has no fdatasync stage, and completion starts at the write.
    @Test func aWriteThatDidNotSyncHasNoFdatasyncStage() {
        let commit = Self.commit(end: 400, started: 1_300, written: 1_400, finished: 1_400)
        let trace = IngestStageTrace(received: 1_000, applied: 1_100, appended: 1_150)
        let stages = trace.stages(writtenBy: commit, completed: 1_900, replied: 1_950)
        #expect(stages.map(\.0) == [.apply, .append, .commitWait, .write, .completion, .reply])
        #expect(stages.map(\.1) == [100, 50, 150, 100, 500, 50])
    }

    /// Another thread's clock read a hair earlier gives 0, never a wrapped-around stage.
    @Test func aStageNeverRunsBackwards() {
        let commit = Self.commit(end: 400, started: 1_100, written: 1_200, finished: 1_300)
        let trace = IngestStageTrace(received: 1_000, applied: 1_100, appended: 1_150)
        let stages = trace.stages(writtenBy: commit, completed: 1_250, replied: 1_240)
        #expect(stages.allSatisfy { $0.1 < 1_000 }, "\(stages)")
        #expect(stages.first { $0.0 == .commitWait }?.1 == 0)
        #expect(stages.first { $0.0 == .completion }?.1 == 0)
    }
}
