import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsClient

/// The client's queries in process: queries, replies and the time go in by hand; what goes on
/// which member's socket and what each waiter is answered is read back. No sockets, no thread,
/// no real time.
struct QuerySchedulerTests {
    /// A ``QueryEnvironment`` without sockets: it records the queries transmitted and the
    /// answers, and can refuse to queue.
    final class RecordingQueries: QueryEnvironment {
        struct Sent: Equatable {
            var tag: UInt64
            var worker: Int
            var member: Int
            var query: Query
        }

        var refusal: ReceiptsClientError?
        private(set) var sent: [Sent] = []
        private(set) var answers: [Result<QueryReply, ReceiptsClientError>] = []

        func reach(_ worker: Int) -> Bool {
            (0..<2).contains(worker)
        }

        func transmitQuery(tag: UInt64, body: [UInt8], to worker: Int, member: Int) -> ReceiptsClientError? {
            if let refusal { return refusal }
            // A query the scheduler encoded always decodes.
            sent.append(Sent(tag: tag, worker: worker, member: member, query: try! Query.decode(body)))
            return nil
        }

        func complete(_ completion: QueryCompletion, _ result: Result<QueryReply, ReceiptsClientError>, worker: Int) {
            if case .caller(_, let reply) = completion { reply.resume(returning: result) }
            answers.append(result)
        }

        /// The queries transmitted since the last call.
        func takeSent() -> [Sent] {
            defer { sent = [] }
            return sent
        }
    }

    final class Fixture {
        let environment = RecordingQueries()
        let statistics = ClientStatistics()
        let configuration: ReceiptsClient.Configuration
        let scheduler: QueryScheduler
        let start = ContinuousClock.now

        /// Two ordinals of `members` members each, named `m<member>-<ordinal>`.
        init(members: Int, _ configure: (inout ReceiptsClient.Configuration) -> Void = { _ in }) {
            var configuration = ReceiptsClient.Configuration(
                cluster: Cluster(
                    members: (0..<2).map { ordinal in
                        (0..<members).map { IngestSchedulerTests.Fixture.member($0, of: ordinal) }
                    }
                ),
                source: "gw"
            )
            configure(&configuration)
            self.configuration = configuration
            scheduler = QueryScheduler(
                configuration: configuration,
                primaries: PrimaryTracker(configuration: configuration, statistics: statistics),
                statistics: statistics,
                environment: environment
            )
        }

        func at(_ milliseconds: Int) -> ContinuousClock.Instant {
            start + .milliseconds(milliseconds)
        }

        /// The answers' replies (nil for a failure), in order.
        var replies: [QueryReply?] { environment.answers.map { try? $0.get() } }

        /// The answers' error codes (nil for a reply), in order.
        var failures: [ReceiptsClientError.Code?] {
            environment.answers.map {
                guard case .failure(let error) = $0 else { return nil }
                return error.code
            }
        }
    }

    static let repair = QueryCompletion.repair(.readState(subscription: 1))
    static let health = QueryReply.health(
        Health(state: "serving", workerIndex: 0, workerCount: 2, uptimeMilliseconds: 1, publisherRun: 3, member: "m1-0")
    )

    static func notPrimary(naming member: String?) -> Result<(QueryReply, ServedBy?), WireError> {
        .success(
            (
                .error(
                    ErrorReply(
                        code: .notPrimary,
                        message: "not the primary",
                        primary: member.map { ErrorReply.Primary(member: $0) }
                    )
                ),
                nil
            )
        )
    }

    @Test func aQueryFollowsNotPrimaryToTheMemberNamedWithItsTag() {
        let fixture = Fixture(members: 2)
        fixture.scheduler.start(.health, worker: 0, completion: Self.repair, now: fixture.at(0))
        let first = fixture.environment.takeSent()
        #expect(first.map(\.member) == [0])
        fixture.scheduler.replied(
            tag: first[0].tag,
            Self.notPrimary(naming: "m1-0"),
            worker: 0,
            member: 0,
            now: fixture.at(1)
        )
        let again = fixture.environment.takeSent()
        #expect(again == [.init(tag: first[0].tag, worker: 0, member: 1, query: .health)])
        #expect(fixture.environment.answers.isEmpty, "a waiter never sees NOT_PRIMARY")
        fixture.scheduler.replied(
            tag: first[0].tag,
            .success((Self.health, nil)),
            worker: 0,
            member: 1,
            now: fixture.at(2)
        )
        fixture.scheduler.replied(
            tag: first[0].tag,
            .success((Self.health, nil)),
            worker: 0,
            member: 1,
            now: fixture.at(3)
        )
        #expect(fixture.replies == [Self.health], "a repeated reply is dropped")
        #expect(fixture.scheduler.nextDeadline == nil)
    }

    @Test func aNotPrimaryNamingNobodyIsAskedAgainAfterAPauseAtTheSameMember() {
        let fixture = Fixture(members: 2)
        fixture.scheduler.start(.health, worker: 1, completion: Self.repair, now: fixture.at(0))
        let tag = fixture.environment.takeSent()[0].tag
        fixture.scheduler.replied(tag: tag, Self.notPrimary(naming: nil), worker: 1, member: 0, now: fixture.at(1))
        #expect(fixture.environment.takeSent().isEmpty)
        #expect(fixture.statistics.queryRetries.load(ordering: .relaxed) == 1)
        let resendAt = try! #require(fixture.scheduler.nextDeadline)
        fixture.scheduler.expire(now: resendAt)
        #expect(fixture.environment.takeSent().map(\.member) == [0], "the member answered: it is not left")
    }

    @Test func aSilentMemberIsLeftAfterTheAcknowledgementTimeoutAndADeadlineFails() {
        let fixture = Fixture(members: 2) { $0.acknowledgementTimeoutMilliseconds = 300 }
        fixture.scheduler.start(.health, worker: 0, completion: Self.repair, now: fixture.at(0))
        _ = fixture.environment.takeSent()
        let silence = fixture.configuration.acknowledgementTimeoutMilliseconds
        fixture.scheduler.expire(now: fixture.at(silence - 1))
        #expect(fixture.environment.takeSent().isEmpty)
        fixture.scheduler.expire(now: fixture.at(silence))
        #expect(fixture.environment.takeSent().map(\.member) == [1])
        // A repair gives up after at most a second.
        fixture.scheduler.expire(now: fixture.at(1000))
        #expect(fixture.failures == [.timeout])
        #expect(fixture.statistics.queryTimeouts.load(ordering: .relaxed) == 1)
    }

    @Test func aFollowerReadGoesToAStandbyAndFallsBackToThePrimary() async {
        let fixture = Fixture(members: 2) { $0.readFrom = .standbyPreferred }
        let query = Query.unreadCounts(user: "ann", conversations: [])
        let reply = await withCheckedContinuation { continuation in
            fixture.scheduler.start(query, worker: 0, completion: .caller(id: 7, continuation), now: fixture.at(0))
            let standby = fixture.environment.takeSent()
            #expect(standby.map(\.member) == [1])
            fixture.scheduler.replied(
                tag: standby[0].tag,
                .success((.error(ErrorReply(code: .unavailable, message: "stale")), nil)),
                worker: 0,
                member: 1,
                now: fixture.at(1)
            )
            let primary = fixture.environment.takeSent()
            #expect(primary.map(\.member) == [0])
            fixture.scheduler.replied(
                tag: primary[0].tag,
                .success((Self.health, nil)),
                worker: 0,
                member: 0,
                now: fixture.at(2)
            )
        }
        #expect((try? reply.get()) == Self.health)
        #expect(fixture.statistics.standbyFallbacks.load(ordering: .relaxed) == 1)
    }

    @Test func aQueryThatCannotLeaveFailsAtOnceAndAnUnknownWorkerIsRefused() {
        let fixture = Fixture(members: 1)
        fixture.environment.refusal = ReceiptsClientError(.unavailable, "full")
        fixture.scheduler.start(.health, worker: 0, completion: Self.repair, now: fixture.at(0))
        fixture.scheduler.start(.health, worker: 5, completion: Self.repair, now: fixture.at(0))
        #expect(fixture.failures == [.unavailable, .invalidArgument])
        #expect(fixture.scheduler.nextDeadline == nil)
    }

    @Test func aCancelledCallerIsAnsweredAndItsLateReplyDropped() async {
        let fixture = Fixture(members: 1)
        var tag: UInt64 = 0
        let result = await withCheckedContinuation { continuation in
            fixture.scheduler.start(.health, worker: 0, completion: .caller(id: 3, continuation), now: fixture.at(0))
            tag = fixture.environment.takeSent()[0].tag
            #expect(fixture.scheduler.cancel(id: 3))
        }
        #expect(throws: ReceiptsClientError.self) { try result.get() }
        fixture.scheduler.replied(tag: tag, .success((Self.health, nil)), worker: 0, member: 0, now: fixture.at(1))
        #expect(fixture.environment.answers.isEmpty)
        #expect(!fixture.scheduler.cancel(id: 3))
    }

    @Test func anUndecodableReplyFailsItsQueryAsMalformed() {
        let fixture = Fixture(members: 1)
        fixture.scheduler.start(.health, worker: 0, completion: Self.repair, now: fixture.at(0))
        let tag = fixture.environment.takeSent()[0].tag
        fixture.scheduler.replied(
            tag: tag,
            .failure(WireError(code: .malformedFrame, message: "garbage")),
            worker: 0,
            member: 0,
            now: fixture.at(1)
        )
        #expect(fixture.failures == [.malformedReply])
        #expect(fixture.statistics.malformedReplies.load(ordering: .relaxed) == 1)
    }
}
