import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsService

/// What the pipeline emits and when: nothing before it is durable, a frame's updates before its
/// acknowledgement, gap-free sequences per conversation, coalescing per message.
@Suite struct PublishingTests {
    /// A three-member group and a direct conversation.
    private static let setup: [EventKind] = [
        .conversationUpserted(conversation: "c1", kind: .group, members: ["ann", "bob", "cem"]),
        .conversationUpserted(conversation: "c2", kind: .direct, members: ["ann", "bob"]),
    ]

    /// A committed move renumbers the engine's conversations (it drops the released ones), and
    /// the publisher finds streams by that number: a conversation that stays keeps its topic and
    /// its numbering, one made after takes no stale stream, and snapshots say the same.
    @Test func afterACommittedMoveEachConversationKeepsItsTopicAndItsNumbering() async throws {
        let fixture = try PipelineFixture()
        // The first conversation moves to worker 1 of 2; the second stays, after it in the engine.
        let ids = (0..<64).map { "c\($0)" }
        let leaving = try #require(ids.first { Partitioning.owner(of: $0, workerCount: 2) == 1 })
        let staying = try #require(ids.first { Partitioning.owner(of: $0, workerCount: 2) == 0 })
        let later = try #require(ids.last { Partitioning.owner(of: $0, workerCount: 2) == 0 && $0 != staying })
        func send(_ message: String, in conversation: String) -> EventKind {
            .messageSent(conversation: conversation, message: message, sender: "ann", isSystem: false)
        }
        fixture.ingest(
            [leaving, staying].map { .conversationUpserted(conversation: $0, kind: .direct, members: ["ann", "bob"]) }
                + [send("m1", in: leaving), send("m1", in: staying), send("m2", in: staying)]
        )
        try await fixture.settle()

        guard case .topology = try await fixture.ask(.prepareMove(epoch: 1, from: 1, to: 2)) else {
            throw PipelineTestError("prepareMove was refused")
        }
        guard
            case .exportResult(let export) = try await fixture.ask(
                .exportConversations(epoch: 1, destination: 1, limit: 100)
            )
        else { throw PipelineTestError("exportConversations was refused") }
        #expect(export.conversations == [leaving])
        _ = try await fixture.ask(.releaseConversations(epoch: 1, destination: 1, conversations: export.conversations))
        guard case .topology = try await fixture.ask(.commitMove(epoch: 1)) else {
            throw PipelineTestError("commitMove was refused")
        }

        fixture.sink.clear()
        fixture.ingest([
            .conversationUpserted(conversation: later, kind: .direct, members: ["ann", "bob"]),
            send("m1", in: later), send("m3", in: staying),
        ])
        try await fixture.settle()
        #expect(fixture.sink.malformedUpdates == 0, "an update went out under another conversation's topic")
        let numbered = fixture.sink.updates.map { "\($0.status.conversation)#\($0.sequence)" }
        #expect(numbered == ["\(later)#1", "\(staying)#3"])
        #expect(fixture.pipeline.statusPublisher.sequence(of: staying) == 3)
        #expect(fixture.pipeline.statusPublisher.sequence(of: later) == 1)
    }

    @Test func nothingLeavesBeforeItIsDurableAndUpdatesPrecedeTheirAcknowledgement() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.setup)
        try await fixture.settle()
        fixture.sink.clear()

        // Frame i touches only message m<i> (alternating conversations), so its updates are
        // recognisable among the outputs.
        var appended: [LogPosition] = []
        for i in 0..<40 {
            let conversation = i.isMultiple(of: 2) ? "c1" : "c2"
            fixture.ingest([
                .messageSent(conversation: conversation, message: "m\(i)", sender: "ann", isSystem: false),
                .delivered(conversation: conversation, user: "bob", message: "m\(i)"),
                .read(conversation: conversation, user: "bob", message: "m\(i)"),
            ])
            appended.append(fixture.pipeline.log.appendedPosition)
        }
        // Applied and appended, but nothing may leave before `advance` sees it durable.
        #expect(fixture.sink.outputs.isEmpty)
        try await fixture.settle()

        var replyIndex = 0
        var lastUpdateOfMessage: [String: Int] = [:]
        for (index, output) in fixture.sink.outputs.enumerated() {
            switch output {
            case .update(let update, let durable):
                let message = update.status.message
                let frame = Int(message.dropFirst())!
                #expect(durable >= appended[frame], "update of \(message) published before its frame was durable")
                lastUpdateOfMessage[message] = index
            case .readState(let update, let durable):
                // Bob's read of frame i's message moved his watermark to its sequence, i + 1.
                let frame = Int(update.change.state.readUpTo) - 1
                #expect(
                    durable >= appended[frame],
                    "bob's read state of frame \(frame) published before it was durable"
                )
            case .reply(let endpoint, let body, let durable):
                #expect(endpoint == .ingest)
                #expect(durable >= appended[replyIndex], "frame \(replyIndex) acknowledged before it was durable")
                #expect(try IngestReply.decode(body).results.count == 3)
                let updateIndex = try #require(lastUpdateOfMessage["m\(replyIndex)"])
                #expect(updateIndex < index, "frame \(replyIndex) acknowledged before its updates were published")
                replyIndex += 1
            }
        }
        #expect(replyIndex == 40)
        #expect(fixture.sink.malformedUpdates == 0)
    }

    @Test func sequencesArePerConversationWithoutGapsAndFollowTheEngine() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.setup)
        for i in 0..<25 {
            fixture.ingest([
                .messageSent(conversation: "c1", message: "g\(i)", sender: "ann", isSystem: false),
                .messageSent(conversation: "c2", message: "d\(i)", sender: "bob", isSystem: false),
                .read(conversation: "c2", user: "ann", message: "d\(i)"),
            ])
        }
        try await fixture.settle()

        let updates = fixture.sink.updates
        for conversation in ["c1", "c2"] {
            let sequences = updates.filter { $0.status.conversation == conversation }.map(\.sequence)
            #expect(sequences == Array(1...UInt64(sequences.count)), "\(conversation): \(sequences)")
        }
        #expect(Set(updates.map(\.publisherRun)) == [fixture.pipeline.statusPublisher.publisherRun])
        // Every update shows the message as the engine had it after that frame: d<i> is read.
        let lastOfD = updates.filter { $0.status.message.hasPrefix("d") }.reduce(into: [:]) {
            $0[$1.status.message] = $1
        }
        #expect(lastOfD.count == 25)
        #expect(lastOfD.values.allSatisfy { $0.status.status == .read })
        #expect(fixture.counter("receiptd.updates.published") == UInt64(updates.count))
        // A snapshot query reports the sequence published last, so a subscriber can line up.
        let reply = try await fixture.ask(.snapshot(conversation: "c2", limit: 100))
        guard case .snapshot(_, let epoch, let sequence) = reply else {
            throw PipelineTestError("unexpected reply \(reply)")
        }
        #expect(epoch == fixture.pipeline.statusPublisher.publisherRun)
        #expect(sequence == updates.filter { $0.status.conversation == "c2" }.last?.sequence)
    }

    @Test func coalescingPublishesOneUpdatePerMessageWhenItsWindowCloses() async throws {
        let fixture = try PipelineFixture { $0.coalesceMilliseconds = 50 }
        let start = ServiceClock.monotonicMilliseconds()
        fixture.ingest(Self.setup)
        fixture.ingest([.messageSent(conversation: "c2", message: "m1", sender: "ann", isSystem: false)])
        fixture.ingest([.delivered(conversation: "c2", user: "bob", message: "m1")])
        fixture.ingest([.read(conversation: "c2", user: "bob", message: "m1")])
        fixture.ingest([.messageSent(conversation: "c1", message: "g1", sender: "ann", isSystem: false)])
        try await fixture.settle(now: start)

        // Every frame is acknowledged; the updates wait for their window.
        #expect(try fixture.sink.ingestReplies().count == 5)
        #expect(fixture.sink.updates.isEmpty)
        #expect(fixture.pipeline.millisecondsUntilDue(now: start) == 50)
        try fixture.pipeline.advance(now: start + 49)
        #expect(fixture.sink.updates.isEmpty)

        try fixture.pipeline.advance(now: start + 50)
        let updates = fixture.sink.updates
        #expect(updates.count == 2)
        let m1 = try #require(updates.first { $0.status.message == "m1" })
        #expect(m1.status.status == .read)
        #expect(m1.sequence == 1)
        #expect(updates.first { $0.status.message == "g1" }?.status.status == .notDelivered)
        #expect(fixture.pipeline.millisecondsUntilDue(now: start + 50) == nil)

        // A later change opens a new window and publishes with the next sequence.
        fixture.ingest([.messageEdited(conversation: "c2", message: "m1")])
        try await fixture.settle(now: start + 60)
        try fixture.pipeline.advance(now: start + 110)
        let edited = try #require(fixture.sink.updates.last)
        #expect(edited.status.isEdited)
        #expect(edited.sequence == 2)
    }

    @Test func betweenFramesWhatBecameDurableIsCompletedWithoutWaitingForTheTurnToEnd() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.setup)
        fixture.ingest([.messageSent(conversation: "c2", message: "m1", sender: "ann", isSystem: false)])
        try await fixture.waitUntilDurable()
        try await Task.sleep(for: .milliseconds(2))
        // What the socket loop calls after each received frame, without `advance`.
        fixture.pipeline.completeDurableIfDue()
        #expect(try fixture.sink.ingestReplies().count == 2)
        #expect(fixture.sink.updates.map(\.status.message) == ["m1"])
        #expect(fixture.pipeline.awaiting.isEmpty)
    }

    @Test func shutDownPublishesHeldUpdatesAndAnswersEverything() async throws {
        let fixture = try PipelineFixture { $0.coalesceMilliseconds = 60_000 }
        fixture.ingest(Self.setup)
        fixture.ingest([.messageSent(conversation: "c2", message: "m1", sender: "ann", isSystem: false)])
        try fixture.pipeline.shutDown()
        #expect(try fixture.sink.ingestReplies().count == 2)
        #expect(fixture.sink.updates.map(\.status.message) == ["m1"])
    }
}
