import Logging
import ReceiptsCore
import ReceiptsWire
import ZeroMQ

extension ClientLoop {
    /// How long a failed or refused repair waits before it is tried again.
    static let repairRetryMilliseconds = 100

    func startSubscription(id: UInt64, topic: SubscriptionTopic, output: AsyncStream<StatusUpdate>.Continuation) {
        let workers: [Int]
        if case .conversation(let conversation) = topic {
            workers = [Partitioning.owner(of: conversation, workerCount: ingest.count)]
        } else {
            workers = Array(ingest.indices)
        }
        var sockets: [ZMQSocket] = []
        do {
            for worker in workers {
                let socket = try ZMQSocket(context: context, type: .sub)
                sockets.append(socket)
                // The loop drains these promptly; a gap from a full buffer is repaired anyway.
                try socket.setReceiveHighWaterMark(100_000)
                try socket.subscribe(topic.filter)
                try secure(socket)
                try socket.connect(configuration.cluster.workers[worker].publish)
            }
        } catch {
            logger.error("cannot subscribe", metadata: ["receipts.topic": "\(topic.filter)", "error": "\(error)"])
            for socket in sockets { socket.close() }
            output.finish()
            return
        }
        var subscription = Subscription(topic: topic, sockets: sockets, output: output)
        if case .conversation(let conversation) = topic {
            subscription.tracker.expectSnapshot(of: conversation)
            subscription.settleAt = clock.now + .milliseconds(configuration.subscriptionSettleMilliseconds)
            subscriptions[id] = subscription
            requestRepair(conversation, subscription: id)
        } else {
            subscriptions[id] = subscription
        }
        pollSetChanged = true
    }

    func endSubscription(id: UInt64) {
        guard let subscription = subscriptions.removeValue(forKey: id) else { return }
        for socket in subscription.sockets { socket.close() }
        subscription.output.finish()
        pollSetChanged = true
    }

    /// Reads every update waiting on one of a subscription's sockets.
    func receiveUpdates(subscription id: UInt64, socket: ZMQSocket) throws(ZMQError) {
        guard let topic = subscriptions[id]?.topic else { return }
        while true {
            // nil: nothing waiting; .some(nil): not an update of this topic, or undecodable.
            let received = try socket.receiveMultipart(dontWait: true) { frames -> StatusUpdate? in
                guard frames.count == 2, topic.matches(frames[0]) else { return nil }
                return try? StatusUpdate.decode(frames[1])
            }
            guard let received else { return }
            guard let update = received else { continue }
            guard let decision = subscriptions[id]?.tracker.receive(update) else { return }
            apply(decision, subscription: id)
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
                scheduleRepair(update.status.conversation, subscription: id)
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

    private func requestRepair(_ conversation: String, subscription id: UInt64) {
        guard subscriptions[id]?.repairing.insert(conversation).inserted == true else { return }
        subscriptions[id]?.repairsDue[conversation] = nil
        statistics.snapshotRepairs.add(1)
        startQuery(
            .snapshot(conversation: conversation, limit: 0),
            worker: Partitioning.owner(of: conversation, workerCount: ingest.count),
            completion: .repair(subscription: id, conversation: conversation)
        )
    }

    private func scheduleRepair(_ conversation: String, subscription id: UInt64) {
        guard subscriptions[id]?.repairsDue[conversation] == nil else { return }
        subscriptions[id]?.repairsDue[conversation] = clock.now + .milliseconds(Self.repairRetryMilliseconds)
    }

    /// A snapshot (or its failure) for a repair.
    func repairArrived(_ result: Result<QueryReply, ReceiptsClientError>, subscription id: UInt64, conversation: String)
    {
        guard subscriptions[id]?.repairing.remove(conversation) != nil else { return }
        switch result {
        case .success(.snapshot(let snapshot, let epoch, let sequence)):
            guard let decision = subscriptions[id]?.tracker.snapshotArrived(snapshot, epoch: epoch, sequence: sequence)
            else { return }
            apply(decision, subscription: id)
        case .success(.error(let error)) where error.code == .notFound:
            guard let decision = subscriptions[id]?.tracker.absent(conversation) else { return }
            apply(decision, subscription: id)
        case .success(let other):
            logger.debug(
                "snapshot repair refused",
                metadata: ["receipts.conversation": "\(conversation)", "reply": "\(other)"]
            )
            scheduleRepair(conversation, subscription: id)
        case .failure(let error):
            logger.debug(
                "snapshot repair failed",
                metadata: ["receipts.conversation": "\(conversation)", "error": "\(error)"]
            )
            scheduleRepair(conversation, subscription: id)
        }
    }

    /// Starts repairs whose time came and the slow-joiner snapshot.
    func runSubscriptionTimers(now: Instant) {
        for (id, subscription) in subscriptions {
            if let settleAt = subscription.settleAt, settleAt <= now {
                subscriptions[id]?.settleAt = nil
                if case .conversation(let conversation) = subscription.topic,
                    !subscription.tracker.isRepairing(conversation)
                {
                    subscriptions[id]?.tracker.expectSnapshot(of: conversation)
                    requestRepair(conversation, subscription: id)
                }
            }
            for (conversation, due) in subscription.repairsDue where due <= now {
                subscriptions[id]?.repairsDue[conversation] = nil
                if subscriptions[id]?.tracker.isRepairing(conversation) == false {
                    subscriptions[id]?.tracker.expectSnapshot(of: conversation)
                }
                requestRepair(conversation, subscription: id)
            }
        }
    }
}
