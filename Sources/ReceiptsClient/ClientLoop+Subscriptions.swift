import Logging
import ReceiptsCore
import ReceiptsWire
import ZeroMQ

extension ClientLoop {
    /// How long a failed or refused repair waits before it is tried again.
    static let repairRetryMilliseconds = 100

    /// Starts following a topic from every worker the cluster lists, whatever the topic, since
    /// a conversation moved between workers is published by its new owner.
    func startSubscription(id: UInt64, topic: SubscriptionTopic, output: AsyncStream<StatusUpdate>.Continuation) {
        guard listenEverywhere(id, topic) else {
            output.finish()
            return
        }
        guard case .conversation(let conversation) = topic else {
            subscriptions[id] = Subscription(topic: topic, output: output, repairs: RepairSchedule())
            return
        }
        var subscription = Subscription(
            topic: topic,
            output: output,
            repairs: RepairSchedule(settleAt: clock.now + .milliseconds(configuration.subscriptionSettleMilliseconds))
        )
        subscription.tracker.expectSnapshot(of: conversation)
        subscriptions[id] = subscription
        requestRepair(conversation, subscription: id)
    }

    /// Listens to every worker the cluster lists and adds a subscription's filter.
    /// - Returns: false (and logs why) if a socket could not be made or refused the filter.
    func listenEverywhere(_ id: UInt64, _ topic: some FilteredTopic) -> Bool {
        do {
            for worker in configuration.cluster.ordinals where try updateListeners.listen(to: worker) {
                pollSetChanged = true
            }
            try updateListeners.add(id, topic)
            return true
        } catch {
            logger.error("cannot subscribe", metadata: ["receipts.topic": "\(topic.filters)", "error": "\(error)"])
            return false
        }
    }

    /// Listens to a worker not listened to yet (a repair followed NOT_OWNER to a worker beyond
    /// the cluster's list, which only a templated cluster names).
    private func listen(to worker: Int) {
        do {
            if try updateListeners.listen(to: worker) { pollSetChanged = true }
        } catch {
            logger.warning(
                "cannot listen to a worker",
                metadata: ["receipts.worker": "\(worker)", "error": "\(error)"]
            )
        }
    }

    func endSubscription(id: UInt64) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        updateListeners.remove(id, subscription.topic)
        subscription.output.finish()
    }

    /// Reads every update waiting on a worker's SUB socket and hands each to every
    /// subscription it is for (decoded once, whatever their number): a user topic's to the
    /// read-state subscriptions, any other to the status subscriptions.
    /// - Parameters:
    ///   - worker: The worker the socket listens to.
    ///   - socket: The socket.
    func receiveUpdates(worker: Int, socket: ZMQSocket) throws(ZMQError) {
        while true {
            // nil: nothing waiting; .some(nil): no subscription's update, or undecodable.
            let received = try socket.receiveMultipart(dontWait: true) { frames -> ([UInt64], PublishedUpdate)? in
                guard frames.count == 2 else { return nil }
                let ids = updateListeners.subscribers(of: frames[0])
                guard !ids.isEmpty, let update = try? PublishedUpdate.decode(topic: frames[0], body: frames[1]) else {
                    return nil
                }
                return (ids, update)
            }
            guard let received else { return }
            switch received {
            case nil:
                continue
            case (let ids, .readState(let update))?:
                receiveReadState(update, for: ids, from: worker)
            case (let ids, .status(let update))?:
                for id in ids {
                    guard let decision = subscriptions[id]?.tracker.receive(update, from: worker) else { continue }
                    apply(decision, subscription: id)
                }
            }
        }
    }

    /// Hands a decision's updates to the consumer and starts its repair.
    private func apply(_ decision: CloneTracker.Decision, subscription id: UInt64) {
        for update in decision.emit {
            guard let output = subscriptions[id]?.output else { return }
            switch output.yield(update) {
            case .enqueued:
                continue
            case .dropped:
                // No room: the conversation catches up from a snapshot once the consumer has some.
                statistics.updatesCoalesced.add(1)
                subscriptions[id]?.tracker.lost(update)
                scheduleRepair(
                    update.status.conversation,
                    subscription: id,
                    afterMilliseconds: Self.repairRetryMilliseconds
                )
            case .terminated:
                endSubscription(id: id)
                return
            @unknown default:
                continue
            }
        }
        if let conversation = decision.repair {
            requestRepair(conversation, subscription: id)
        }
    }

    /// Asks for a snapshot of a conversation, from the worker a NOT_OWNER answer last named for
    /// it, else from its owner by the routing count.
    private func requestRepair(_ conversation: String, subscription id: UInt64) {
        guard subscriptions[id]?.repairs.ask(conversation) == true else { return }
        statistics.snapshotRepairs.add(1)
        let worker =
            subscriptions[id]?.owners[conversation]
            ?? owner(of: conversation)
        askSnapshot(conversation, subscription: id, worker: worker, hops: 0)
    }

    /// Sends a repair's snapshot query to one worker.
    /// - Parameter hops: How many NOT_OWNER answers led there.
    private func askSnapshot(_ conversation: String, subscription id: UInt64, worker: Int, hops: Int) {
        startQuery(
            .snapshot(conversation: conversation, limit: 0),
            worker: worker,
            completion: .repair(subscription: id, conversation: conversation, hops: hops)
        )
    }

    /// A worker's update socket connected (again): updates published before its subscriptions
    /// reached the worker are lost without a gap to show it (the worker restarted, or a standby
    /// took over), so once the filters had time to settle, each one-conversation subscription
    /// and each read-state subscription is repaired from a snapshot. (A prefix subscription
    /// starts every conversation from the first update seen, and goes on so.)
    func reconnected(worker: Int) {
        let settle = configuration.subscriptionSettleMilliseconds
        for (id, subscription) in subscriptions {
            if case .conversation(let conversation) = subscription.topic {
                scheduleRepair(conversation, subscription: id, afterMilliseconds: settle)
            }
        }
        for id in readStateSubscriptions.keys {
            scheduleReadStateRepair(from: worker, subscription: id, afterMilliseconds: settle)
        }
    }

    /// Repairs a conversation after a pause (unless a repair is due already).
    private func scheduleRepair(_ conversation: String, subscription id: UInt64, afterMilliseconds pause: Int) {
        subscriptions[id]?.repairs.schedule(conversation, at: clock.now + .milliseconds(pause))
    }

    /// A snapshot (or its failure) for a repair.
    /// - Parameters:
    ///   - result: The reply.
    ///   - id: The subscription.
    ///   - conversation: The conversation repaired.
    ///   - worker: The worker that was asked.
    ///   - hops: How many NOT_OWNER answers led to it.
    func repairArrived(
        _ result: Result<QueryReply, ReceiptsClientError>,
        subscription id: UInt64,
        conversation: String,
        worker: Int,
        hops: Int
    ) {
        guard subscriptions[id]?.repairs.answered(conversation) == true else { return }
        switch result {
        case .success(.snapshot(let snapshot, let publisherRun, let sequence)):
            remember(owner: worker, of: conversation, subscription: id)
            listen(to: worker)
            guard
                let decision = subscriptions[id]?.tracker.snapshotArrived(
                    snapshot,
                    publisherRun: publisherRun,
                    sequence: sequence,
                    from: worker
                )
            else { return }
            apply(decision, subscription: id)
        case .success(.error(let error)) where error.code == .notFound:
            guard let decision = subscriptions[id]?.tracker.absent(conversation) else { return }
            apply(decision, subscription: id)
        case .success(.error(let error)):
            guard let refusal = RoutingPolicy.Refusal(error) else {
                retryRepair(conversation, subscription: id, after: "\(error.code): \(error.message)")
                return
            }
            switch RoutingPolicy(configuration).decide(refusal, from: worker, hops: hops, canReach: reach) {
            case .follow(let owner):
                // The conversation moved (or our worker count is not the cluster's): ask the
                // owner it names, listen to that owner's updates, and start there next time.
                remember(owner: owner, of: conversation, subscription: id)
                listen(to: owner)
                subscriptions[id]?.repairs.askElsewhere(conversation)
                statistics.queryRedirects.add(1)
                askSnapshot(conversation, subscription: id, worker: owner, hops: hops + 1)
            case .retry(let pause):
                // Frozen while it moves, or the worker is stopping: later.
                statistics.queryRetries.add(1)
                scheduleRepair(conversation, subscription: id, afterMilliseconds: pause)
            case .giveUp:
                // Start again from the owner by the routing count.
                subscriptions[id]?.owners[conversation] = nil
                scheduleRepair(conversation, subscription: id, afterMilliseconds: Self.repairRetryMilliseconds)
            }
        case .success(let other):
            retryRepair(conversation, subscription: id, after: "\(other)")
        case .failure(let error):
            logger.debug(
                "snapshot repair failed",
                metadata: ["receipts.conversation": "\(conversation)", "error": "\(error)"]
            )
            scheduleRepair(conversation, subscription: id, afterMilliseconds: Self.repairRetryMilliseconds)
        }
    }

    /// Tries a repair again later after a reply that is neither a snapshot nor a refusal the
    /// routing policy knows.
    private func retryRepair(_ conversation: String, subscription id: UInt64, after reply: String) {
        logger.debug(
            "snapshot repair refused",
            metadata: ["receipts.conversation": "\(conversation)", "reply": "\(reply)"]
        )
        scheduleRepair(conversation, subscription: id, afterMilliseconds: Self.repairRetryMilliseconds)
    }

    /// Records where a conversation's repairs go first: nowhere special when that is its owner
    /// by the routing count (the map stays as small as the conversations that moved).
    private func remember(owner: Int, of conversation: String, subscription id: UInt64) {
        let routed = self.owner(of: conversation)
        subscriptions[id]?.owners[conversation] = owner == routed ? nil : owner
    }

    /// Starts repairs whose time came and the slow-joiner snapshot.
    func runSubscriptionTimers(now: Instant) {
        for id in Array(subscriptions.keys) {
            guard let (settled, due) = subscriptions[id]?.repairs.takeDue(now: now) else { continue }
            if settled, case .conversation(let conversation)? = subscriptions[id]?.topic,
                subscriptions[id]?.tracker.isRepairing(conversation) == false
            {
                subscriptions[id]?.tracker.expectSnapshot(of: conversation)
                requestRepair(conversation, subscription: id)
            }
            for conversation in due {
                if subscriptions[id]?.tracker.isRepairing(conversation) == false {
                    subscriptions[id]?.tracker.expectSnapshot(of: conversation)
                }
                requestRepair(conversation, subscription: id)
            }
        }
    }
}
