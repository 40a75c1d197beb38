import Logging
import ReceiptsCore
import ReceiptsWire

/// What a ``SubscriptionScheduler`` asks of its owner: the SUB sockets the subscriptions share
/// and the query sockets their snapshots come through. `ClientLoop` in service; a recording fake
/// in tests.
protocol SubscriptionEnvironment: AnyObject {
    /// Listens to every worker the cluster lists and adds a subscription's filter.
    /// - Returns: false (and logs why) if a socket could not be made or refused the filter.
    func follow(_ id: UInt64, _ topic: some FilteredTopic) -> Bool

    /// Removes a subscription's filter.
    func unfollow(_ id: UInt64, _ topic: some FilteredTopic)

    /// Listens to a worker's updates if not yet (a NOT_OWNER answer named a worker beyond the
    /// cluster's list, which only a templated cluster names).
    func listen(to worker: Int)

    /// Makes sure queries can go to a worker (see ``IngestEnvironment/reach(_:)``).
    func reach(_ worker: Int) -> Bool

    /// Sends a repair's query to a worker; its reply or failure comes back to the scheduler's
    /// ``SubscriptionScheduler/snapshotArrived(_:for:from:)``.
    func ask(_ query: Query, worker: Int, for repair: SubscriptionScheduler.Repair)
}

/// The client's subscriptions without sockets or a clock of its own (time is passed in), as
/// ``IngestScheduler`` is its sends. Status subscriptions keep a ``CloneTracker`` and repair one
/// conversation at a time; read-state subscriptions keep a ``ReadStateTracker`` and repair one
/// worker's stream at a time. Both follow the same rules: an update goes to each subscription it
/// is for; a gap, or an update the consumer had no room for, is repaired from a snapshot; a
/// snapshot refused or failed is asked again after a pause; the slow joiner's extra snapshot
/// comes once the filters had time to reach the publishers; and a worker's update socket that
/// connected again repairs what it publishes.
///
/// Single-threaded: every method runs on the thread that owns the environment.
final class SubscriptionScheduler {
    /// What a repair's snapshot is for.
    enum Repair: Equatable {
        /// A status subscription's conversation, reached after `hops` NOT_OWNER answers.
        case conversation(subscription: UInt64, conversation: String, hops: Int)
        /// A read-state subscription's stream from the worker asked.
        case readState(subscription: UInt64)
    }

    /// How long a failed or refused repair, or one of an update the consumer had no room for,
    /// waits.
    static let repairRetryMilliseconds = 100

    private let configuration: ReceiptsClient.Configuration
    private let statistics: ClientStatistics
    private let logger: Logger
    private unowned let environment: any SubscriptionEnvironment
    private var statuses: [UInt64: Subscription] = [:]
    /// Read-state subscriptions (their ids are distinct from `statuses`').
    private var readStates: [UInt64: ReadStateSubscription] = [:]

    /// - Parameter environment: Where filters and queries go; it must outlive the scheduler.
    init(
        configuration: ReceiptsClient.Configuration,
        statistics: ClientStatistics,
        logger: Logger,
        environment: any SubscriptionEnvironment
    ) {
        self.configuration = configuration
        self.statistics = statistics
        self.logger = logger
        self.environment = environment
    }

    /// The earliest time a repair or a slow joiner's round comes due, if any will.
    var nextTimer: ContinuousClock.Instant? {
        (statuses.values.compactMap(\.repairs.nextTimer) + readStates.values.compactMap(\.repairs.nextTimer)).min()
    }

    /// The worker that owns a conversation under the cluster's routing count.
    private func owner(of conversation: String) -> Int {
        Partitioning.owner(of: conversation, workerCount: configuration.cluster.workerCount)
    }

    // MARK: - Starting and ending

    /// Starts following a status topic from every worker the cluster lists, whatever the topic,
    /// since a conversation moved between workers is published by its new owner; a
    /// one-conversation subscription starts from its snapshot, and takes the slow joiner's.
    func startStatuses(
        id: UInt64,
        topic: SubscriptionTopic,
        output: AsyncStream<StatusUpdate>.Continuation,
        now: ContinuousClock.Instant
    ) {
        guard environment.follow(id, topic) else {
            output.finish()
            return
        }
        guard case .conversation(let conversation) = topic else {
            statuses[id] = Subscription(topic: topic, output: output, repairs: RepairSchedule())
            return
        }
        var subscription = Subscription(
            topic: topic,
            output: output,
            repairs: RepairSchedule(settleAt: now + .milliseconds(configuration.subscriptionSettleMilliseconds))
        )
        subscription.tracker.expectSnapshot(of: conversation)
        statuses[id] = subscription
        requestRepair(conversation, subscription: id)
    }

    /// Starts following a user's read state: listens to every worker the cluster lists and asks
    /// each for the user's snapshot (their unread counts with the stream position), then once more
    /// after the settle time.
    func startReadStates(
        id: UInt64,
        topic: ReadStateTopic,
        output: AsyncStream<ReadStateUpdate>.Continuation,
        now: ContinuousClock.Instant
    ) {
        guard environment.follow(id, topic) else {
            output.finish()
            return
        }
        readStates[id] = ReadStateSubscription(
            topic: topic,
            output: output,
            settleAt: now + .milliseconds(configuration.subscriptionSettleMilliseconds)
        )
        for worker in configuration.cluster.ordinals { repairReadState(from: worker, subscription: id) }
    }

    /// Ends a subscription of either kind, finishing its stream.
    func end(id: UInt64) {
        if let subscription = statuses.removeValue(forKey: id) {
            environment.unfollow(id, subscription.topic)
            subscription.output.finish()
        }
        if let subscription = readStates.removeValue(forKey: id) {
            environment.unfollow(id, subscription.topic)
            subscription.output.finish()
        }
    }

    /// Ends every subscription.
    func endAll() {
        for id in Array(statuses.keys) + Array(readStates.keys) { end(id: id) }
    }

    // MARK: - Updates

    /// Hands an update published by `worker` to each subscription it is for.
    func receive(_ update: PublishedUpdate, for ids: [UInt64], from worker: Int, now: ContinuousClock.Instant) {
        for id in ids {
            switch update {
            case .status(let status):
                guard let decision = statuses[id]?.tracker.receive(status, from: worker) else { continue }
                apply(decision, subscription: id, now: now)
            case .readState(let readState):
                guard let decision = readStates[id]?.tracker.receive(readState, from: worker) else { continue }
                apply(decision, readStateSubscription: id, worker: worker, now: now)
            }
        }
    }

    /// Hands `updates` to a consumer.
    /// - Returns: The updates it had no room for, in order, and whether it ended.
    private static func yield<Update: Sendable>(
        _ updates: [Update],
        to output: AsyncStream<Update>.Continuation
    ) -> (dropped: [Update], ended: Bool) {
        var dropped: [Update] = []
        for update in updates {
            switch output.yield(update) {
            case .enqueued: continue
            case .dropped: dropped.append(update)
            case .terminated: return (dropped, true)
            @unknown default: continue
            }
        }
        return (dropped, false)
    }

    /// Hands a status decision's updates to the consumer and starts its repair. An update the
    /// consumer had no room for is caught up from a snapshot once it has some.
    private func apply(_ decision: CloneTracker.Decision, subscription id: UInt64, now: ContinuousClock.Instant) {
        guard let output = statuses[id]?.output else { return }
        let (dropped, ended) = Self.yield(decision.emit, to: output)
        for update in dropped {
            statistics.updatesCoalesced.add(1)
            statuses[id]?.tracker.lost(update)
            scheduleRepair(update.status.conversation, subscription: id, after: Self.repairRetryMilliseconds, now: now)
        }
        if ended { return end(id: id) }
        if let conversation = decision.repair { requestRepair(conversation, subscription: id) }
    }

    /// The same for a read-state decision: a worker's stream the consumer missed an update of is
    /// caught up from that worker's snapshot.
    private func apply(
        _ decision: ReadStateTracker.Decision,
        readStateSubscription id: UInt64,
        worker: Int,
        now: ContinuousClock.Instant
    ) {
        guard let output = readStates[id]?.output else { return }
        let (dropped, ended) = Self.yield(decision.emit, to: output)
        for update in dropped {
            statistics.updatesCoalesced.add(1)
            readStates[id]?.tracker.lost(update, from: worker)
            scheduleReadStateRepair(from: worker, subscription: id, after: Self.repairRetryMilliseconds, now: now)
        }
        if ended { return end(id: id) }
        if let worker = decision.repair { repairReadState(from: worker, subscription: id) }
    }

    /// A worker's update socket connected (again): updates published before its subscriptions
    /// reached the worker are lost without a gap to show it (the worker restarted, or a standby
    /// took over), so once the filters had time to settle, each one-conversation subscription
    /// and each read-state subscription is repaired from a snapshot. (A prefix subscription
    /// starts every conversation from the first update seen, and goes on so.)
    func reconnected(worker: Int, now: ContinuousClock.Instant) {
        let settle = configuration.subscriptionSettleMilliseconds
        for (id, subscription) in statuses {
            if case .conversation(let conversation) = subscription.topic {
                scheduleRepair(conversation, subscription: id, after: settle, now: now)
            }
        }
        for id in readStates.keys {
            scheduleReadStateRepair(from: worker, subscription: id, after: settle, now: now)
        }
    }

    // MARK: - Repairs

    /// Starts the repairs whose time came and the slow joiners' snapshots.
    func runTimers(now: ContinuousClock.Instant) {
        for id in Array(statuses.keys) {
            guard let (settled, due) = statuses[id]?.repairs.takeDue(now: now) else { continue }
            if settled, case .conversation(let conversation)? = statuses[id]?.topic,
                statuses[id]?.tracker.isRepairing(conversation) == false
            {
                statuses[id]?.tracker.expectSnapshot(of: conversation)
                requestRepair(conversation, subscription: id)
            }
            for conversation in due {
                if statuses[id]?.tracker.isRepairing(conversation) == false {
                    statuses[id]?.tracker.expectSnapshot(of: conversation)
                }
                requestRepair(conversation, subscription: id)
            }
        }
        for id in Array(readStates.keys) {
            guard let (settled, due) = readStates[id]?.repairs.takeDue(now: now) else { continue }
            if settled {
                for worker in configuration.cluster.ordinals { repairReadState(from: worker, subscription: id) }
            }
            for worker in due { repairReadState(from: worker, subscription: id) }
        }
    }

    /// Repairs a conversation after a pause (unless a repair is due already).
    private func scheduleRepair(
        _ conversation: String,
        subscription id: UInt64,
        after pause: Int,
        now: ContinuousClock.Instant
    ) {
        statuses[id]?.repairs.schedule(conversation, at: now + .milliseconds(pause))
    }

    /// Repairs a worker's read-state stream after a pause (unless a repair is due already).
    private func scheduleReadStateRepair(
        from worker: Int,
        subscription id: UInt64,
        after pause: Int,
        now: ContinuousClock.Instant
    ) {
        readStates[id]?.repairs.schedule(worker, at: now + .milliseconds(pause))
    }

    /// Asks for a snapshot of a conversation, from the worker a NOT_OWNER answer last named for
    /// it, else from its owner by the routing count.
    private func requestRepair(_ conversation: String, subscription id: UInt64) {
        guard statuses[id]?.repairs.ask(conversation) == true else { return }
        statistics.snapshotRepairs.add(1)
        let worker = statuses[id]?.owners[conversation] ?? owner(of: conversation)
        askSnapshot(conversation, subscription: id, worker: worker, hops: 0)
    }

    /// Sends a repair's snapshot query to one worker.
    /// - Parameter hops: How many NOT_OWNER answers led there.
    private func askSnapshot(_ conversation: String, subscription id: UInt64, worker: Int, hops: Int) {
        environment.ask(
            .snapshot(conversation: conversation, limit: 0),
            worker: worker,
            for: .conversation(subscription: id, conversation: conversation, hops: hops)
        )
    }

    /// Asks a worker for a read-state subscriber's snapshot (unless it is being asked already).
    private func repairReadState(from worker: Int, subscription id: UInt64) {
        guard let topic = readStates[id]?.topic, readStates[id]?.repairs.ask(worker) == true else { return }
        readStates[id]?.tracker.expectSnapshot(from: worker)
        statistics.snapshotRepairs.add(1)
        environment.ask(
            .unreadCounts(user: topic.user, conversations: []),
            worker: worker,
            for: .readState(subscription: id)
        )
    }

    /// A repair's snapshot, or why there is none, from the worker asked.
    func snapshotArrived(
        _ result: Result<QueryReply, ReceiptsClientError>,
        for repair: Repair,
        from worker: Int,
        now: ContinuousClock.Instant
    ) {
        switch repair {
        case .conversation(let id, let conversation, let hops):
            conversationArrived(
                result,
                subscription: id,
                conversation: conversation,
                worker: worker,
                hops: hops,
                now: now
            )
        case .readState(let id):
            readStateArrived(result, subscription: id, worker: worker, now: now)
        }
    }

    private func conversationArrived(
        _ result: Result<QueryReply, ReceiptsClientError>,
        subscription id: UInt64,
        conversation: String,
        worker: Int,
        hops: Int,
        now: ContinuousClock.Instant
    ) {
        guard statuses[id]?.repairs.answered(conversation) == true else { return }
        switch result {
        case .success(.snapshot(let snapshot, let publisherRun, let sequence)):
            remember(owner: worker, of: conversation, subscription: id)
            environment.listen(to: worker)
            guard
                let decision = statuses[id]?.tracker.snapshotArrived(
                    snapshot,
                    publisherRun: publisherRun,
                    sequence: sequence,
                    from: worker
                )
            else { return }
            apply(decision, subscription: id, now: now)
        case .success(.error(let error)) where error.code == .notFound:
            guard let decision = statuses[id]?.tracker.absent(conversation) else { return }
            apply(decision, subscription: id, now: now)
        case .success(.error(let error)):
            guard let refusal = RoutingPolicy.Refusal(error) else {
                retryRepair(conversation, subscription: id, after: "\(error.code): \(error.message)", now: now)
                return
            }
            switch RoutingPolicy(configuration).decide(refusal, from: worker, hops: hops, canReach: environment.reach) {
            case .follow(let owner):
                // The conversation moved (or our worker count is not the cluster's): ask the
                // owner it names, listen to that owner's updates, and start there next time.
                remember(owner: owner, of: conversation, subscription: id)
                environment.listen(to: owner)
                statuses[id]?.repairs.askElsewhere(conversation)
                statistics.queryRedirects.add(1)
                askSnapshot(conversation, subscription: id, worker: owner, hops: hops + 1)
            case .retry(let pause):
                // Frozen while it moves, or the worker is stopping: later.
                statistics.queryRetries.add(1)
                scheduleRepair(conversation, subscription: id, after: pause, now: now)
            case .giveUp:
                // Start again from the owner by the routing count.
                statuses[id]?.owners[conversation] = nil
                scheduleRepair(conversation, subscription: id, after: Self.repairRetryMilliseconds, now: now)
            }
        case .success(let other):
            retryRepair(conversation, subscription: id, after: "\(other)", now: now)
        case .failure(let error):
            retryRepair(conversation, subscription: id, after: "\(error)", now: now)
        }
    }

    /// Tries a repair again later after a reply that is neither a snapshot nor a refusal the
    /// routing policy knows, or a failure.
    private func retryRepair(
        _ conversation: String,
        subscription id: UInt64,
        after reply: String,
        now: ContinuousClock.Instant
    ) {
        logger.debug(
            "snapshot repair refused or failed",
            metadata: ["receipts.conversation": "\(conversation)", "reply": "\(reply)"]
        )
        scheduleRepair(conversation, subscription: id, after: Self.repairRetryMilliseconds, now: now)
    }

    /// Records where a conversation's repairs go first: nowhere special when that is its owner
    /// by the routing count (the map stays as small as the conversations that moved).
    private func remember(owner: Int, of conversation: String, subscription id: UInt64) {
        statuses[id]?.owners[conversation] = owner == self.owner(of: conversation) ? nil : owner
    }

    private func readStateArrived(
        _ result: Result<QueryReply, ReceiptsClientError>,
        subscription id: UInt64,
        worker: Int,
        now: ContinuousClock.Instant
    ) {
        guard readStates[id]?.repairs.answered(worker) == true else { return }
        if case .success(.unreadCounts(let counts, let publisherRun, let sequence, let threads)) = result,
            publisherRun != 0
        {
            guard
                let decision = readStates[id]?.tracker.snapshotArrived(
                    counts,
                    threads: threads,
                    publisherRun: publisherRun,
                    sequence: sequence,
                    from: worker,
                    owner: owner(of:)
                )
            else { return }
            return apply(decision, readStateSubscription: id, worker: worker, now: now)
        }
        // A refusal (a worker not serving yet), an answer without a stream position (a member
        // that publishes nothing), or a failure: later.
        logger.debug(
            "read-state repair refused or failed",
            metadata: ["receipts.worker": "\(worker)", "reply": "\(result)"]
        )
        scheduleReadStateRepair(from: worker, subscription: id, after: Self.repairRetryMilliseconds, now: now)
    }
}
