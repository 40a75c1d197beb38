import Logging
import ReceiptsCore
import ReceiptsWire

extension ClientLoop {
    /// Starts following a user's read state: listens to every worker the cluster lists and asks
    /// each for the user's snapshot (their unread counts with the stream position), then once more
    /// after the settle time, since a SUB filter takes effect at the publisher only after a while.
    func startReadStateSubscription(
        id: UInt64,
        topic: ReadStateTopic,
        output: AsyncStream<ReadStateUpdate>.Continuation
    ) {
        guard listenEverywhere(id, topic) else {
            output.finish()
            return
        }
        readStateSubscriptions[id] = ReadStateSubscription(
            topic: topic,
            output: output,
            settleAt: clock.now + .milliseconds(configuration.subscriptionSettleMilliseconds)
        )
        for worker in configuration.cluster.ordinals { repairReadState(from: worker, subscription: id) }
    }

    func endReadStateSubscription(id: UInt64) {
        guard let subscription = readStateSubscriptions.removeValue(forKey: id) else { return }
        updateListeners.remove(id, subscription.topic)
        subscription.output.finish()
    }

    /// Hands one read-state update to each subscription it is for.
    func receiveReadState(_ update: ReadStateUpdate, for ids: [UInt64], from worker: Int) {
        for id in ids {
            guard let decision = readStateSubscriptions[id]?.tracker.receive(update, from: worker) else { continue }
            apply(decision, readStateSubscription: id, worker: worker)
        }
    }

    /// Hands a decision's updates to the consumer and starts its repair.
    private func apply(_ decision: ReadStateTracker.Decision, readStateSubscription id: UInt64, worker: Int) {
        for update in decision.emit {
            guard let output = readStateSubscriptions[id]?.output else { return }
            switch output.yield(update) {
            case .enqueued:
                continue
            case .dropped:
                // No room: the worker's stream catches up from a snapshot once the consumer has some.
                statistics.updatesCoalesced.add(1)
                readStateSubscriptions[id]?.tracker.lost(update, from: worker)
                scheduleReadStateRepair(from: worker, subscription: id, afterMilliseconds: Self.repairRetryMilliseconds)
            case .terminated:
                endReadStateSubscription(id: id)
                return
            @unknown default:
                continue
            }
        }
        if let worker = decision.repair { repairReadState(from: worker, subscription: id) }
    }

    /// Asks a worker for the user's snapshot (unless it is being asked already).
    private func repairReadState(from worker: Int, subscription id: UInt64) {
        guard let topic = readStateSubscriptions[id]?.topic, readStateSubscriptions[id]?.repairs.ask(worker) == true
        else { return }
        readStateSubscriptions[id]?.tracker.expectSnapshot(from: worker)
        statistics.snapshotRepairs.add(1)
        startQuery(
            .unreadCounts(user: topic.user, conversations: []),
            worker: worker,
            completion: .readStateRepair(subscription: id)
        )
    }

    /// Repairs a worker's stream after a pause (unless a repair is due already).
    func scheduleReadStateRepair(from worker: Int, subscription id: UInt64, afterMilliseconds pause: Int) {
        readStateSubscriptions[id]?.repairs.schedule(worker, at: clock.now + .milliseconds(pause))
    }

    /// A worker's snapshot (or its failure) for a read-state repair.
    func readStateRepairArrived(
        _ result: Result<QueryReply, ReceiptsClientError>,
        subscription id: UInt64,
        worker: Int
    ) {
        guard readStateSubscriptions[id]?.repairs.answered(worker) == true else { return }
        switch result {
        case .success(.unreadCounts(let counts, let publisherRun, let sequence)) where publisherRun != 0:
            guard
                let decision = readStateSubscriptions[id]?.tracker.snapshotArrived(
                    counts,
                    publisherRun: publisherRun,
                    sequence: sequence,
                    from: worker,
                    owner: owner(of:)
                )
            else { return }
            apply(decision, readStateSubscription: id, worker: worker)
        case .success(let reply):
            // A refusal (a worker not serving yet), or an answer without a stream position (a
            // member that publishes nothing): later.
            logger.debug(
                "read-state repair refused",
                metadata: ["receipts.worker": "\(worker)", "reply": "\(reply)"]
            )
            scheduleReadStateRepair(from: worker, subscription: id, afterMilliseconds: Self.repairRetryMilliseconds)
        case .failure(let error):
            logger.debug(
                "read-state repair failed",
                metadata: ["receipts.worker": "\(worker)", "error": "\(error)"]
            )
            scheduleReadStateRepair(from: worker, subscription: id, afterMilliseconds: Self.repairRetryMilliseconds)
        }
    }

    /// Starts repairs whose time came and the slow-joiner snapshots.
    func runReadStateTimers(now: Instant) {
        for id in Array(readStateSubscriptions.keys) {
            guard let (settled, due) = readStateSubscriptions[id]?.repairs.takeDue(now: now) else { continue }
            if settled {
                for worker in configuration.cluster.ordinals { repairReadState(from: worker, subscription: id) }
            }
            for worker in due { repairReadState(from: worker, subscription: id) }
        }
    }
}
