import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsService

/// Replies that a ROUTER cannot take yet (its queue to the peer is full) wait inside the
/// pipeline, in order, and go out once it takes them: a frame applied and made durable is
/// always acknowledged. A peer that reads none of its replies is bounded by its in-flight limit.
@Suite struct HeldReplyTests {
    private static func messages(_ range: ClosedRange<Int>) -> [EventKind] {
        range.map { .messageSent(conversation: "c", message: "m\($0)", sender: "ann", isSystem: false) }
    }

    private static func fixtureWithConversation(
        _ adjust: (inout ServiceConfiguration) -> Void = { _ in }
    ) async throws -> PipelineFixture {
        let fixture = try PipelineFixture(adjust)
        fixture.ingest([.conversationUpserted(conversation: "c", kind: .direct, members: ["ann", "bob"])])
        try await fixture.settle()
        fixture.sink.clear()
        return fixture
    }

    @Test func repliesToAFullPeerWaitInOrderAndLeaveOnceItTakesThem() async throws {
        let fixture = try await Self.fixtureWithConversation()
        fixture.sink.fullPeers = ["slow"]
        // Frame k holds k events, so its reply has k results: the order shows.
        fixture.ingest(Self.messages(1...1), peer: "slow")
        fixture.ingest(Self.messages(2...3), peer: "slow")
        fixture.ingest(Self.messages(4...6), peer: "slow")
        fixture.ingest(Self.messages(7...7), peer: "calm")
        try await fixture.settle()
        #expect(try fixture.sink.ingestReplies().map(\.results.count) == [1], "only the calm peer's reply left")
        #expect(fixture.counter("receiptd.replies.held") == 3)
        #expect(fixture.pipeline.millisecondsUntilDue(now: ServiceClock.monotonicMilliseconds()) == 1)

        // Its queue has room again, but a new reply must not overtake the held ones.
        fixture.sink.fullPeers = []
        fixture.ingest(Self.messages(8...11), peer: "slow")
        try await fixture.settle()
        let replies = try fixture.sink.ingestReplies()
        #expect(replies.map(\.results.count) == [1, 1, 2, 3, 4])
        #expect(replies.allSatisfy { $0.error == nil && $0.results.allSatisfy { $0 == .accepted(held: false) } })
        #expect(fixture.pipeline.heldReplies.isEmpty)
        #expect(fixture.counter("receiptd.replies.dropped", label: "unroutable") == 0)
        #expect(fixture.pipeline.millisecondsUntilDue(now: ServiceClock.monotonicMilliseconds()) == nil)
    }

    @Test func aPeerThatReadsNothingIsBoundedAndItsExcessIsNotApplied() async throws {
        let fixture = try await Self.fixtureWithConversation { $0.maxFramesInFlight = 2 }
        fixture.sink.fullPeers = ["deaf"]
        fixture.ingest(Self.messages(1...1), peer: "deaf")
        fixture.ingest(Self.messages(2...2), peer: "deaf")
        try await fixture.settle()
        #expect(fixture.pipeline.heldReplies.count == 2)

        fixture.ingest(Self.messages(3...3), peer: "deaf")
        fixture.ingest(Self.messages(4...4), peer: "calm")
        try await fixture.settle()
        #expect(fixture.pipeline.heldReplies.count == 2, "nothing more is held for the deaf peer")
        #expect(fixture.counter("receiptd.requests.discarded", label: "ingest") == 1)
        #expect(try fixture.sink.ingestReplies().count == 1, "the calm peer is answered")
        let status = try await fixture.ask(
            .messageStatus(conversation: "c", message: "m3", viewer: Viewer(user: "ann"))
        )
        guard case .error(let error) = status else { throw PipelineTestError("m3 was applied: \(status)") }
        #expect(error.code == .notFound)

        // Once it reads again, its held replies go out and its re-sent frame is taken.
        fixture.sink.fullPeers = []
        try await fixture.settle()
        #expect(try fixture.sink.ingestReplies().count == 3)
        fixture.ingest(Self.messages(3...3), peer: "deaf")
        try await fixture.settle()
        #expect(try fixture.sink.ingestReplies().count == 4)
    }
}
