import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsService

/// How the pipeline publishes users' own read states (issue 23): on each user's topic, with
/// one gap-free sequence per user across their conversations, only once durable and before the
/// acknowledgement, and with unread counts that say where in that stream they stand.
@Suite struct ReadStatePublishingTests {
    /// Two groups and a direct conversation, bob in all three.
    private static let setup: [EventKind] = [
        .conversationUpserted(conversation: "c1", kind: .group, members: ["ann", "bob", "cem"]),
        .conversationUpserted(conversation: "c2", kind: .direct, members: ["ann", "bob"]),
        .conversationUpserted(conversation: "c3", kind: .group, members: ["bob", "cem", "dan"]),
    ]

    /// Round `i` of traffic: a message in each conversation, then bob reads all three and cem
    /// reads c1's (four read states; bob's in a frame of their own).
    private static func round(_ i: Int) -> [[EventKind]] {
        [
            [
                .messageSent(conversation: "c1", message: "a\(i)", sender: "ann", isSystem: false),
                .messageSent(conversation: "c2", message: "b\(i)", sender: "ann", isSystem: false),
                .messageSent(conversation: "c3", message: "c\(i)", sender: "dan", isSystem: false),
            ],
            [
                .read(conversation: "c1", user: "bob", message: "a\(i)"),
                .read(conversation: "c2", user: "bob", message: "b\(i)"),
                .read(conversation: "c3", user: "bob", message: "c\(i)"),
            ],
            [.read(conversation: "c1", user: "cem", message: "a\(i)")],
        ]
    }

    /// The last state each update gave a user per conversation.
    private static func lastStates(_ updates: [ReadStateUpdate], of user: String) -> [String: UnreadCount] {
        updates.filter { $0.change.user == user }.reduce(into: [:]) {
            $0[$1.change.state.conversation] = $1.change.state
        }
    }

    /// The user's unread counts answer, by conversation, with its epoch and sequence.
    private static func unreadCounts(
        _ fixture: PipelineFixture,
        of user: String
    ) async throws -> (counts: [String: UnreadCount], publisherRun: UInt64, sequence: UInt64) {
        let reply = try await fixture.ask(.unreadCounts(user: user, conversations: []))
        guard case .unreadCounts(let counts, let publisherRun, let sequence, _) = reply else {
            throw PipelineTestError("unexpected reply \(reply)")
        }
        return (Dictionary(uniqueKeysWithValues: counts.map { ($0.conversation, $0) }), publisherRun, sequence)
    }

    @Test func eachUsersSequenceRunsWithoutGapsAcrossTheirConversations() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.setup)
        for i in 0..<10 {
            for frame in Self.round(i) { fixture.ingest(frame) }
        }
        fixture.ingest([.markedUnread(conversation: "c2", user: "bob")])
        fixture.ingest([.memberLeft(conversation: "c3", user: "cem")])
        try await fixture.settle()

        let updates = fixture.sink.readStates
        #expect(fixture.sink.malformedUpdates == 0, "every update decodes and came on its user's topic")
        // Every member's join is reported first (ann 2, bob 3, cem 2, dan 1), then the traffic.
        #expect(Set(updates.map(\.change.user)) == ["ann", "bob", "cem", "dan"])
        for user in ["bob", "cem"] {
            let sequences = updates.filter { $0.change.user == user }.map(\.sequence)
            #expect(sequences == Array(1...UInt64(sequences.count)), "\(user): \(sequences)")
        }
        #expect(updates.filter { $0.change.user == "bob" }.count == 3 + 31)
        #expect(updates.filter { $0.change.user == "cem" }.count == 2 + 11)
        #expect(Set(updates.map(\.publisherRun)) == [fixture.pipeline.statusPublisher.publisherRun])
        // Bob's reads of one frame come in the frame's order, c1, c2, c3, ten times over.
        let bobsReads = updates.filter { $0.change.user == "bob" }.dropFirst(3).prefix(30).map(
            \.change.state.conversation
        )
        #expect(bobsReads == Array(repeating: ["c1", "c2", "c3"], count: 10).flatMap { $0 })
        // Each user's last update per conversation is their state now; the per-user snapshot
        // lists the conversations they are still in.
        for user in ["ann", "bob", "cem", "dan"] {
            let now = try await Self.unreadCounts(fixture, of: user).counts
            #expect(Self.lastStates(updates, of: user).filter { !$0.value.hasLeft } == now, "\(user)")
        }
        #expect(Self.lastStates(updates, of: "bob")["c2"]?.isMarkedUnread == true)
        #expect(Self.lastStates(updates, of: "cem")["c3"]?.hasLeft == true)
        #expect(fixture.counter("receiptd.read_states.published") == UInt64(updates.count))
    }

    @Test func nothingLeavesBeforeItIsDurableAndEachFramesStatesPrecedeItsAcknowledgement() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.setup)
        fixture.ingest([.messageSent(conversation: "c2", message: "b0", sender: "ann", isSystem: false)])
        fixture.ingest([.read(conversation: "c2", user: "bob", message: "b0")])
        try await fixture.settle()
        fixture.sink.clear()

        // Frame i changes only bob's read state in c2 (read states 1-3 were his joins, 4 his read of
        // b0): marked unread (even i) or read (odd i).
        var appended: [LogPosition] = []
        for i in 0..<20 {
            let kind: EventKind =
                i.isMultiple(of: 2)
                ? .markedUnread(conversation: "c2", user: "bob") : .read(conversation: "c2", user: "bob", message: nil)
            fixture.ingest([kind])
            appended.append(fixture.pipeline.log.appendedPosition)
        }
        #expect(fixture.sink.outputs.isEmpty, "applied and appended, but nothing may leave before it is durable")
        try await fixture.settle()

        var frame = 0
        var statesOfFrame = 0
        for output in fixture.sink.outputs {
            switch output {
            case .readState(let update, let durable):
                #expect(durable >= appended[frame], "read state of frame \(frame) published before it was durable")
                #expect(update.sequence == UInt64(frame + 5))
                #expect(update.change.state.isMarkedUnread == frame.isMultiple(of: 2))
                statesOfFrame += 1
            case .reply(let endpoint, _, let durable):
                #expect(endpoint == .ingest)
                #expect(durable >= appended[frame])
                #expect(statesOfFrame == 1, "frame \(frame) acknowledged after \(statesOfFrame) read states")
                frame += 1
                statesOfFrame = 0
            case .update(let update, _):
                Issue.record("a read state change published a status: \(update)")
            }
        }
        #expect(frame == 20)
    }

    @Test func unreadCountsSayWhichSequenceOfTheUsersStreamTheyInclude() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.setup)
        for i in 0..<3 {
            for frame in Self.round(i) { fixture.ingest(frame) }
        }
        try await fixture.settle()
        let run = fixture.pipeline.statusPublisher.publisherRun
        let bob = try await Self.unreadCounts(fixture, of: "bob")
        #expect(bob.publisherRun == run)
        #expect(bob.sequence == fixture.sink.readStates.filter { $0.change.user == "bob" }.last?.sequence)
        #expect(bob.sequence == 3 + 9, "three joins, then nine reads")
        let ann = try await Self.unreadCounts(fixture, of: "ann")
        #expect(ann.publisherRun == run)
        #expect(ann.sequence == 2, "only ann's two joins published")
        #expect(ann.counts["c1"]?.unread == 0)

        // A device that repairs while reads are in flight: the answer counts bob's read of
        // c2 that is not durable yet, the reply waits for it, and the updates after the
        // answer's sequence bring the counts to bob's state now.
        fixture.sink.clear()
        fixture.ingest([.messageSent(conversation: "c2", message: "late", sender: "ann", isSystem: false)])
        try await fixture.settle()
        fixture.ingest([.read(conversation: "c2", user: "bob", message: "late")])
        let before = fixture.sink.outputs.count
        fixture.send(.unreadCounts(user: "bob", conversations: []))
        fixture.ingest([.markedUnread(conversation: "c1", user: "bob")])
        try await fixture.settle()
        let reply = try fixture.sink.outputs[before...].compactMap { output -> QueryReply? in
            guard case .reply(.queries, let body, _) = output else { return nil }
            return try QueryReply.decode(body)
        }.first
        guard case .unreadCounts(let counts, let publisherRun, let sequence, _) = reply else {
            throw PipelineTestError("unexpected reply \(String(describing: reply))")
        }
        #expect(publisherRun == run)
        #expect(counts.first { $0.conversation == "c2" }?.readUpTo == 4, "the answer counts the read in flight")
        var repaired = Dictionary(uniqueKeysWithValues: counts.map { ($0.conversation, $0) })
        for update in fixture.sink.readStates where update.change.user == "bob" && update.sequence > sequence {
            repaired[update.change.state.conversation] = update.change.state
        }
        #expect(repaired == (try await Self.unreadCounts(fixture, of: "bob")).counts)
        #expect(repaired["c1"]?.isMarkedUnread == true)
    }

    @Test func aPrivateReadIsPublishedOnItsReadersTopicOnly() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.setup)
        fixture.ingest([
            .conversationReceiptPrivacy(conversation: "c1", user: "bob", shareReads: false),
            .messageSent(conversation: "c1", message: "a0", sender: "ann", isSystem: false),
        ])
        try await fixture.settle()
        fixture.sink.clear()
        fixture.ingest([.read(conversation: "c1", user: "bob", message: "a0")])
        try await fixture.settle()
        #expect(fixture.sink.readStates.map(\.change.user) == ["bob"])
        #expect(fixture.sink.readStates.first?.change.state.readUpTo == 1)
        #expect(fixture.sink.updates.map(\.status.message) == ["a0"])
        #expect(fixture.sink.updates.allSatisfy { $0.status.readCount == 0 && $0.status.status == .notDelivered })
    }

    @Test func aRestartStartsANewRunAndReplayPublishesNothing() async throws {
        let fixture = try PipelineFixture()
        fixture.ingest(Self.setup)
        for frame in Self.round(0) { fixture.ingest(frame) }
        try await fixture.settle()
        let firstRun = fixture.pipeline.statusPublisher.publisherRun
        try fixture.restart()
        try await fixture.settle()
        #expect(fixture.sink.readStates.isEmpty, "replaying the log publishes no read state")
        #expect(fixture.pipeline.statusPublisher.publisherRun != firstRun)
        let bob = try await Self.unreadCounts(fixture, of: "bob")
        #expect(bob.publisherRun == fixture.pipeline.statusPublisher.publisherRun)
        #expect(bob.sequence == 0)
        #expect(bob.counts["c1"]?.readUpTo == 1)
        for frame in Self.round(1) { fixture.ingest(frame) }
        try await fixture.settle()
        #expect(fixture.sink.readStates.filter { $0.change.user == "bob" }.map(\.sequence) == [1, 2, 3])
    }

    @Test func withReadStatesOffNoneIsPublished() async throws {
        let fixture = try PipelineFixture { $0.publishesReadStates = false }
        fixture.ingest(Self.setup)
        for i in 0..<3 {
            for frame in Self.round(i) { fixture.ingest(frame) }
        }
        fixture.ingest([.markedUnread(conversation: "c2", user: "bob")])
        fixture.ingest([.userDeleted(user: "cem")])
        try await fixture.settle()
        #expect(fixture.sink.readStates.isEmpty)
        #expect(!fixture.sink.updates.isEmpty, "statuses are published all the same")
        #expect(fixture.counter("receiptd.read_states.published") == 0)
        let bob = try await Self.unreadCounts(fixture, of: "bob")
        #expect(bob.sequence == 0)
        #expect(bob.counts["c1"]?.readUpTo == 3)
        #expect(bob.counts["c2"]?.isMarkedUnread == true)
    }

    @Test func readsWhileNobodyFollowsAreNumberedNowhereAndNumberingAgainStartsANewRun() async throws {
        let fixture = try PipelineFixture()
        fixture.sink.followsUsers = false
        fixture.ingest(Self.setup)
        for frame in Self.round(0) { fixture.ingest(frame) }
        try await fixture.settle()
        #expect(fixture.sink.readStates.isEmpty, "nobody follows a user topic")
        let before = try await Self.unreadCounts(fixture, of: "bob")
        #expect(before.sequence == 0)
        #expect(before.counts["c1"]?.readUpTo == 1, "the reads are kept")

        // A device subscribes: its snapshot above is from before; the next read comes in a new run.
        fixture.sink.followsUsers = true
        for frame in Self.round(1) { fixture.ingest(frame) }
        try await fixture.settle()
        let bobs = fixture.sink.readStates.filter { $0.change.user == "bob" }
        #expect(bobs.map(\.sequence) == [1, 2, 3])
        #expect(Set(bobs.map(\.publisherRun)).count == 1)
        #expect(bobs.first?.publisherRun != before.publisherRun, "a snapshot from before the new run is repaired")
        let after = try await Self.unreadCounts(fixture, of: "bob")
        #expect(after.publisherRun == bobs.first?.publisherRun)
        #expect(after.sequence == 3)
    }
}
