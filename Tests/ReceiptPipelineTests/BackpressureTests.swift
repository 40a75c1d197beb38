import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsService

/// The two brakes on intake: the pipeline's own queue (`acceptsIngest`, which makes the loop
/// stop reading so ZeroMQ pushes back), and each connection's frames in flight (refused at once).
@Suite struct BackpressureTests {
    private static func message(_ i: Int) -> [EventKind] {
        [.messageSent(conversation: "c", message: "m\(i)", sender: "ann", isSystem: false)]
    }

    @Test func ingestStopsWhileTheQueueIsFullAndResumesOnceDurable() async throws {
        let fixture = try PipelineFixture(awaitingLimit: 4)
        fixture.ingest([.conversationUpserted(conversation: "c", kind: .direct, members: ["ann", "bob"])])
        for i in 1...2 { fixture.ingest(Self.message(i)) }
        #expect(fixture.pipeline.acceptsIngest)
        fixture.ingest(Self.message(3))
        #expect(!fixture.pipeline.acceptsIngest, "4 batches wait: the loop must stop reading ingest")

        try await fixture.settle()
        #expect(fixture.pipeline.acceptsIngest)
        let replies = try fixture.sink.ingestReplies()
        #expect(replies.count == 4)
        #expect(replies.allSatisfy { $0.error == nil && $0.results == [.accepted(held: false)] })
    }

    @Test func aConnectionPastItsFramesInFlightIsRefusedAtOnceAndOthersAreNot() async throws {
        let fixture = try PipelineFixture { $0.maxFramesInFlight = 2 }
        fixture.ingest([.conversationUpserted(conversation: "c", kind: .direct, members: ["ann", "bob"])])
        try await fixture.settle()
        fixture.sink.clear()

        fixture.ingest(Self.message(1), peer: "busy")
        fixture.ingest(Self.message(2), peer: "busy")
        fixture.ingest(Self.message(3), peer: "busy")
        fixture.ingest(Self.message(4), peer: "calm")
        // The third frame of "busy" is answered before anything is durable: it was not applied.
        let refusals = try fixture.sink.ingestReplies()
        #expect(refusals.count == 1)
        #expect(refusals.first?.error?.code == .unavailable)
        #expect(refusals.first?.results == [])
        #expect(fixture.counter("receiptd.limits.refused", label: "frames_in_flight") == 1)

        try await fixture.settle()
        let replies = try fixture.sink.ingestReplies()
        #expect(replies.count == 4)
        #expect(replies.dropFirst().allSatisfy { $0.error == nil && $0.results == [.accepted(held: false)] })
        // Message 3 was never applied; the re-sent frame (same ids) is accepted once its turn comes.
        let status = try await fixture.ask(
            .messageStatus(conversation: "c", message: "m3", viewer: Viewer(user: "ann"))
        )
        guard case .error(let error) = status else { throw PipelineTestError("m3 exists: \(status)") }
        #expect(error.code == .notFound)
    }

    @Test func aFrameOfDuplicatesIsAnsweredOnlyAfterItsOriginalIsDurable() async throws {
        let fixture = try PipelineFixture()
        let batch = fixture.events([.conversationUpserted(conversation: "c", kind: .direct, members: ["ann", "bob"])])
        for _ in 0..<2 {
            let frames = [Array("gateway-a".utf8), [], EventBatchCodec.encode(batch)]
            frames.withUnsafeBufferPointers { fixture.pipeline.receiveIngest($0, acknowledged: true) }
        }
        // The re-sent frame appended nothing, yet its reply waits behind the original.
        #expect(fixture.pipeline.awaiting.count == 2)
        #expect(fixture.sink.outputs.isEmpty)
        try await fixture.settle()
        #expect(try fixture.sink.ingestReplies().map(\.results) == [[.accepted(held: false)], [.duplicate]])
    }
}
