import Logging
import ReceiptsCore
import ReceiptsWire
import Synchronization
import Testing

@testable import ReceiptsClient

/// The client's subscriptions in process, as `IngestSchedulerTests` drive its sends: updates,
/// snapshot replies and the time go in by hand; the snapshots asked for, the filters and the
/// consumers' streams are read back. No sockets, no thread, no real time.
struct SubscriptionSchedulerTests {
    /// A ``SubscriptionEnvironment`` without sockets: it records filters, listened workers and
    /// the snapshots asked for.
    final class RecordingSubscriptions: SubscriptionEnvironment {
        struct Asked: Equatable {
            var query: Query
            var worker: Int
            var repair: SubscriptionScheduler.Repair
        }

        /// Whether `follow` fails (a socket refused the filter).
        var refusesFilters = false
        private(set) var filters: [UInt64: [String]] = [:]
        private(set) var listened: [Int] = []
        private(set) var asked: [Asked] = []

        func follow(_ id: UInt64, _ topic: some FilteredTopic) -> Bool {
            guard !refusesFilters else { return false }
            filters[id] = topic.filters
            return true
        }

        func unfollow(_ id: UInt64, _ topic: some FilteredTopic) {
            filters[id] = nil
        }

        func listen(to worker: Int) {
            listened.append(worker)
        }

        func reach(_ worker: Int) -> Bool {
            (0..<8).contains(worker)
        }

        func ask(_ query: Query, worker: Int, for repair: SubscriptionScheduler.Repair) {
            asked.append(Asked(query: query, worker: worker, repair: repair))
        }

        /// The snapshots asked for since the last call.
        func takeAsked() -> [Asked] {
            defer { asked = [] }
            return asked
        }
    }

    final class Fixture {
        let environment = RecordingSubscriptions()
        let statistics = ClientStatistics()
        let scheduler: SubscriptionScheduler
        let configuration: ReceiptsClient.Configuration
        let start = ContinuousClock.now

        init(workers: Int = 2) {
            configuration = ReceiptsClient.Configuration(
                cluster: Cluster(workers: (0..<workers).map { _ in .init(dataDirectory: "/nonexistent") }),
                source: "gw"
            )
            scheduler = SubscriptionScheduler(
                configuration: configuration,
                statistics: statistics,
                logger: Logger(label: "test"),
                environment: environment
            )
        }

        /// The time `milliseconds` after the fixture was made.
        func at(_ milliseconds: Int) -> ContinuousClock.Instant {
            start + .milliseconds(milliseconds)
        }

        var settle: Int { configuration.subscriptionSettleMilliseconds }

        /// The worker that owns `conversation` by the routing count.
        func owner(of conversation: String) -> Int {
            Partitioning.owner(of: conversation, workerCount: configuration.cluster.workerCount)
        }
    }

    static func status(_ message: String, read: Int) -> MessageStatus {
        MessageStatus(
            conversation: "c1",
            message: message,
            sequence: UInt64(message.dropFirst()) ?? 0,
            sender: "a",
            sentAt: Timestamp(milliseconds: 1000),
            status: read > 0 ? .readBySome : .delivered,
            recipientCount: 3,
            deliveredCount: 3,
            readCount: read,
            deliveredAt: nil,
            readAt: nil,
            isSystem: false,
            isEdited: false,
            isDeleted: false
        )
    }

    static func snapshot(_ messages: [MessageStatus], sequence: UInt64) -> QueryReply {
        .snapshot(
            ConversationSnapshot(conversation: "c1", kind: .group, members: ["a", "b", "c", "d"], messages: messages),
            publisherRun: 7,
            sequence: sequence
        )
    }

    static let c1Repair = SubscriptionScheduler.Repair.conversation(subscription: 1, conversation: "c1", hops: 0)

    @Test func aConversationStartsFromItsOwnersSnapshotAndTakesTheSlowJoinersOnce() async {
        let fixture = Fixture()
        let (stream, output) = AsyncStream.makeStream(of: StatusUpdate.self)
        fixture.scheduler.startStatuses(id: 1, topic: .conversation("c1"), output: output, now: fixture.at(0))
        let owner = fixture.owner(of: "c1")
        #expect(
            fixture.environment.takeAsked()
                == [.init(query: .snapshot(conversation: "c1", limit: 0), worker: owner, repair: Self.c1Repair)]
        )
        fixture.scheduler.snapshotArrived(
            .success(Self.snapshot([Self.status("m1", read: 1)], sequence: 4)),
            for: Self.c1Repair,
            from: owner,
            now: fixture.at(5)
        )
        fixture.scheduler.runTimers(now: fixture.at(fixture.settle - 1))
        #expect(fixture.environment.takeAsked().isEmpty)
        #expect(fixture.scheduler.nextTimer == fixture.at(fixture.settle))
        fixture.scheduler.runTimers(now: fixture.at(fixture.settle))
        #expect(fixture.environment.takeAsked().map(\.repair) == [Self.c1Repair], "the slow joiner's snapshot")
        fixture.scheduler.snapshotArrived(
            .success(Self.snapshot([Self.status("m1", read: 2)], sequence: 5)),
            for: Self.c1Repair,
            from: owner,
            now: fixture.at(fixture.settle + 5)
        )
        fixture.scheduler.runTimers(now: fixture.at(fixture.settle * 3))
        #expect(fixture.environment.takeAsked().isEmpty, "once")
        #expect(fixture.scheduler.nextTimer == nil)
        fixture.scheduler.end(id: 1)
        var seen: [Int] = []
        for await update in stream { seen.append(update.status.readCount) }
        #expect(seen == [1, 2])
        #expect(fixture.environment.filters[1] == nil)
    }

    @Test func aRefusalNamingAnotherOwnerIsFollowedThereAndRemembered() {
        let fixture = Fixture()
        let (stream, output) = AsyncStream.makeStream(of: StatusUpdate.self)
        defer { withExtendedLifetime(stream) {} }
        fixture.scheduler.startStatuses(id: 1, topic: .conversation("c1"), output: output, now: fixture.at(0))
        let owner = fixture.owner(of: "c1")
        _ = fixture.environment.takeAsked()
        fixture.scheduler.snapshotArrived(
            .success(.error(ErrorReply(code: .notOwner, message: "moved", ownerWorker: 5))),
            for: Self.c1Repair,
            from: owner,
            now: fixture.at(1)
        )
        let moved = SubscriptionScheduler.Repair.conversation(subscription: 1, conversation: "c1", hops: 1)
        #expect(fixture.environment.takeAsked().map(\.repair) == [moved])
        #expect(fixture.environment.listened == [5])
        #expect(fixture.statistics.queryRedirects.load(ordering: .relaxed) == 1)
        fixture.scheduler.snapshotArrived(
            .failure(ReceiptsClientError(.timeout, "no reply")),
            for: moved,
            from: 5,
            now: fixture.at(2)
        )
        fixture.scheduler.runTimers(now: fixture.at(2 + SubscriptionScheduler.repairRetryMilliseconds - 1))
        #expect(fixture.environment.takeAsked().isEmpty, "a failed repair waits its pause")
        fixture.scheduler.runTimers(now: fixture.at(2 + SubscriptionScheduler.repairRetryMilliseconds))
        #expect(fixture.environment.takeAsked().map(\.worker) == [5], "asked where the refusal pointed, first")
    }

    @Test func anUpdateTheConsumerHadNoRoomForIsRepairedFromASnapshot() {
        let fixture = Fixture()
        let (stream, output) = AsyncStream.makeStream(of: StatusUpdate.self, bufferingPolicy: .bufferingOldest(1))
        // A stream nobody holds is terminated: its consumer is gone.
        defer { withExtendedLifetime(stream) {} }
        fixture.scheduler.startStatuses(id: 1, topic: .everything, output: output, now: fixture.at(0))
        #expect(fixture.environment.takeAsked().isEmpty, "a prefix subscription starts from its first update")
        for (sequence, read) in [(1, 1), (2, 2)] {
            fixture.scheduler.receive(
                .status(
                    StatusUpdate(publisherRun: 7, sequence: UInt64(sequence), status: Self.status("m1", read: read))
                ),
                for: [1],
                from: 0,
                now: fixture.at(10)
            )
        }
        #expect(fixture.statistics.updatesCoalesced.load(ordering: .relaxed) == 1)
        #expect(fixture.scheduler.nextTimer == fixture.at(10 + SubscriptionScheduler.repairRetryMilliseconds))
        fixture.scheduler.runTimers(now: fixture.at(10 + SubscriptionScheduler.repairRetryMilliseconds))
        #expect(fixture.environment.takeAsked().map(\.query) == [.snapshot(conversation: "c1", limit: 0)])
    }

    @Test func aReadStateAsksEveryWorkerAndAgainAfterARefusalOrTheSettleTime() {
        let fixture = Fixture(workers: 2)
        let (stream, output) = AsyncStream.makeStream(of: ReadStateUpdate.self)
        defer { withExtendedLifetime(stream) {} }
        fixture.scheduler.startReadStates(id: 2, topic: .user("ann"), output: output, now: fixture.at(0))
        let first = fixture.environment.takeAsked()
        #expect(first.map(\.worker) == [0, 1])
        #expect(first.allSatisfy { $0.query == .unreadCounts(user: "ann", conversations: []) })
        // Worker 0 answers without a stream position (it publishes nothing yet): asked again later.
        fixture.scheduler.snapshotArrived(
            .success(.unreadCounts([], publisherRun: 0, sequence: 0)),
            for: .readState(subscription: 2),
            from: 0,
            now: fixture.at(1)
        )
        fixture.scheduler.snapshotArrived(
            .success(.unreadCounts([], publisherRun: 3, sequence: 9)),
            for: .readState(subscription: 2),
            from: 1,
            now: fixture.at(1)
        )
        fixture.scheduler.runTimers(now: fixture.at(1 + SubscriptionScheduler.repairRetryMilliseconds))
        #expect(fixture.environment.takeAsked().map(\.worker) == [0])
        fixture.scheduler.runTimers(now: fixture.at(fixture.settle))
        #expect(fixture.environment.takeAsked().map(\.worker) == [1], "worker 0 is being asked already")
    }

    @Test func aWorkerThatConnectedAgainRepairsWhatItPublishesAfterTheSettleTime() {
        let fixture = Fixture()
        let (statusStream, statuses) = AsyncStream.makeStream(of: StatusUpdate.self)
        let (readStateStream, readStates) = AsyncStream.makeStream(of: ReadStateUpdate.self)
        defer { withExtendedLifetime((statusStream, readStateStream)) {} }
        fixture.scheduler.startStatuses(id: 1, topic: .conversation("c1"), output: statuses, now: fixture.at(0))
        fixture.scheduler.startReadStates(id: 2, topic: .user("ann"), output: readStates, now: fixture.at(0))
        /// Answers every snapshot asked for since the last call, as their workers would.
        func answerAsked(at time: Int) {
            for asked in fixture.environment.takeAsked() {
                let reply: QueryReply =
                    asked.repair == Self.c1Repair
                    ? Self.snapshot([], sequence: 1) : .unreadCounts([], publisherRun: 3, sequence: 1)
                fixture.scheduler.snapshotArrived(
                    .success(reply),
                    for: asked.repair,
                    from: asked.worker,
                    now: fixture.at(time)
                )
            }
        }
        answerAsked(at: 1)
        fixture.scheduler.runTimers(now: fixture.at(fixture.settle))
        answerAsked(at: fixture.settle)
        #expect(fixture.scheduler.nextTimer == nil, "settled")
        let reconnectedAt = fixture.settle * 4
        fixture.scheduler.reconnected(worker: 1, now: fixture.at(reconnectedAt))
        fixture.scheduler.runTimers(now: fixture.at(reconnectedAt + fixture.settle - 1))
        #expect(fixture.environment.takeAsked().isEmpty)
        fixture.scheduler.runTimers(now: fixture.at(reconnectedAt + fixture.settle))
        let repaired = fixture.environment.takeAsked()
        #expect(repaired.contains { $0.repair == Self.c1Repair })
        #expect(repaired.contains { $0.repair == .readState(subscription: 2) && $0.worker == 1 })
    }

    @Test func aSubscriptionWhoseFilterIsRefusedEndsAtOnce() async {
        let fixture = Fixture()
        fixture.environment.refusesFilters = true
        let (stream, output) = AsyncStream.makeStream(of: StatusUpdate.self)
        fixture.scheduler.startStatuses(id: 1, topic: .conversation("c1"), output: output, now: fixture.at(0))
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
        #expect(fixture.environment.takeAsked().isEmpty)
    }

    @Test func aSnapshotForAnEndedSubscriptionIsIgnored() {
        let fixture = Fixture()
        let (stream, output) = AsyncStream.makeStream(of: StatusUpdate.self)
        defer { withExtendedLifetime(stream) {} }
        fixture.scheduler.startStatuses(id: 1, topic: .conversation("c1"), output: output, now: fixture.at(0))
        _ = fixture.environment.takeAsked()
        fixture.scheduler.end(id: 1)
        fixture.scheduler.snapshotArrived(
            .failure(ReceiptsClientError(.timeout, "")),
            for: Self.c1Repair,
            from: 0,
            now: fixture.at(1)
        )
        fixture.scheduler.runTimers(now: fixture.at(fixture.settle * 2))
        #expect(fixture.environment.takeAsked().isEmpty)
        #expect(fixture.scheduler.nextTimer == nil)
    }
}
