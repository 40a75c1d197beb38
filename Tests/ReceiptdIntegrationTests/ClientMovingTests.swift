import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// `ReceiptsClient` against scripted workers that answer as a worker does while a conversation
/// moves between workers (SCALING.md): `moving` rejections, NOT_OWNER after the release, and
/// UNAVAILABLE queries for a frozen conversation. The real worker cannot answer `moving` yet;
/// these tests pin the client's side of the contract.
@Suite(.serialized, .startsProcesses)
struct ClientMovingTests {
    private static func message(_ conversation: String, _ message: String) -> EventKind {
        .messageSent(conversation: conversation, message: message, sender: "a", isSystem: false)
    }

    private static func outcomes(_ events: [Event], _ outcome: EventOutcome) -> IngestReply {
        IngestReply(results: Array(repeating: outcome, count: events.count))
    }

    private static let moving = EventOutcome.rejected(Rejection(.moving, "the conversation is frozen"))

    private static func client(
        _ workers: [ScriptedWorker],
        workerCount: Int? = nil,
        _ adjust: (inout ReceiptsClient.Configuration) -> Void = { _ in }
    ) throws -> ReceiptsClient {
        var configuration = ReceiptsClient.Configuration(
            cluster: Cluster(workers: workers.map(\.endpoints), workerCount: workerCount)
        )
        configuration.movingBackoffMilliseconds = 100
        configuration.acknowledgementTimeoutMilliseconds = 2000
        configuration.queryTimeoutMilliseconds = 2000
        adjust(&configuration)
        return try ReceiptsClient(configuration, logger: Logger(label: "test-client"))
    }

    /// Three `moving` answers, then the worker applies the events: the caller sees them
    /// accepted, each attempt carried the same ids to the same worker, and each retry waited.
    @Test func aMovingEventIsSentAgainWithTheSameIDUntilApplied() async throws {
        let worker = try ScriptedWorker { events, index in
            Self.outcomes(events, index < 3 ? Self.moving : .accepted(held: false))
        }
        let client = try Self.client([worker])
        let started = ContinuousClock.now
        let outcomes = try await within(10, "the send") {
            try await client.send([Self.message("c", "m1"), Self.message("c", "m2")])
        }
        let elapsed = ContinuousClock.now - started

        #expect(outcomes == [.accepted(held: false), .accepted(held: false)])
        let frames = worker.frames
        #expect(frames.count == 4)
        #expect(Set(frames).count == 1, "every attempt must carry the same ids: \(frames)")
        #expect(client.currentStatistics.movingRetries == 6)
        #expect(elapsed >= .milliseconds(300), "three pauses of movingBackoffMilliseconds")
        await client.shutdown()
        worker.stop()
    }

    /// `moving` never fails a send: a caller that stops waiting is answered `.cancelled`, the
    /// event is not sent again, and nothing is left pending.
    @Test func aCancelledSendStopsRetryingAMovingEvent() async throws {
        let worker = try ScriptedWorker { events, _ in Self.outcomes(events, Self.moving) }
        let client = try Self.client([worker])
        let sending = Task.onOwnThread { try await client.send(Self.message("c", "m1")) }
        for _ in 0..<500 where worker.frames.count < 3 {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(worker.frames.count >= 3, "still retrying")
        sending.cancel()
        // Bounds on a failure only: a clean-clone CI run, its cooperative threads busy with the
        // whole suite, took over 5 s to hand the flush's answer back.
        let result = try await within(15, "the cancelled send") { await sending.result }
        guard case .failure(let error as ReceiptsClientError) = result else {
            Issue.record("a cancelled send returned \(result)")
            return
        }
        #expect(error.code == .cancelled)
        try await within(15, "the flush") { try await client.flush() }
        let afterCancel = worker.frames.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(worker.frames.count <= afterCancel + 1, "a withdrawn event must not be sent again")
        await client.shutdown()
        worker.stop()
    }

    /// The chain a move produces: the old owner answers `moving` while the conversation is
    /// copied, then NOT_OWNER naming the new owner (an ordinal above the routing count), which
    /// applies the event: same id all the way.
    @Test func aMovingEventFollowsTheNewOwnerAfterTheRelease() async throws {
        let newOwner = try ScriptedWorker { events, _ in Self.outcomes(events, .accepted(held: false)) }
        let oldOwner = try ScriptedWorker { events, index in
            let released = EventOutcome.rejected(Rejection(.notOwner, "moved", ownerWorker: 1))
            return Self.outcomes(events, index < 2 ? Self.moving : released)
        }
        let client = try Self.client([oldOwner, newOwner], workerCount: 1)
        let outcome = try await within(10, "the send") { try await client.send(Self.message("c", "m1")) }

        #expect(outcome == .accepted(held: false))
        #expect(oldOwner.frames.count == 3)
        #expect(newOwner.frames == [oldOwner.frames[0]])
        let statistics = client.currentStatistics
        #expect(statistics.movingRetries == 2)
        #expect(statistics.redirects == 1)
        await client.shutdown()
        oldOwner.stop()
        newOwner.stop()
    }

    /// A typed query for a frozen conversation is asked again after UNAVAILABLE until the
    /// owner answers, within the query timeout; past it, UNAVAILABLE is what the caller gets.
    @Test func aQueryForAFrozenConversationIsAskedAgain() async throws {
        let snapshot = ConversationSnapshot(conversation: "c", kind: .group, members: ["a", "b"], messages: [])
        let frozenUntilTheThirdQuery: ScriptedWorker.QueryScript = { query, index in
            guard case .snapshot(let conversation, _) = query, conversation == "c", index >= 2 else {
                return .error(ErrorReply(code: .unavailable, message: "frozen"))
            }
            return .snapshot(snapshot, publisherRun: 1, sequence: 0)
        }
        let worker = try ScriptedWorker(
            ingest: { events, _ in Self.outcomes(events, .accepted(held: false)) },
            query: frozenUntilTheThirdQuery
        )
        let client = try Self.client([worker]) { $0.unavailableBackoffMilliseconds = 50 }
        let answer = try await within(10, "the query") { try await client.snapshot(of: "c") }
        #expect(answer.snapshot == snapshot)
        #expect(client.currentStatistics.queryRetries == 2)

        let started = ContinuousClock.now
        let frozen = await #expect(throws: ReceiptsClientError.self) {
            try await client.snapshot(of: "always-frozen")
        }
        // UNAVAILABLE, or a timeout when the deadline passes while the last try is on its way
        // (a loaded machine).
        #expect(frozen?.code == .unavailable || frozen?.code == .timeout)
        // The query timeout is 2 s; a second of slack for a machine loaded by the parallel suite.
        #expect(ContinuousClock.now - started < .milliseconds(3000), "given up within the query timeout")
        await client.shutdown()
        worker.stop()
    }
}
