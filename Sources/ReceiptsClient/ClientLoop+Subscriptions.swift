import Logging
import ReceiptsCore
import ReceiptsWire
import ZeroMQ

extension ClientLoop: SubscriptionEnvironment {
    func follow(_ id: UInt64, _ topic: some FilteredTopic) -> Bool {
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

    func unfollow(_ id: UInt64, _ topic: some FilteredTopic) {
        updateListeners.remove(id, topic)
    }

    func listen(to worker: Int) {
        do {
            if try updateListeners.listen(to: worker) { pollSetChanged = true }
        } catch {
            logger.warning(
                "cannot listen to a worker",
                metadata: ["receipts.worker": "\(worker)", "error": "\(error)"]
            )
        }
    }

    func ask(_ query: Query, worker: Int, for repair: SubscriptionScheduler.Repair) {
        queries.start(query, worker: worker, completion: .repair(repair), now: clock.now)
    }

    /// Reads every update waiting on a worker's SUB socket and hands each to the subscriptions
    /// it is for (decoded once, whatever their number).
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
            guard let (ids, update) = received else { continue }
            subscriptions.receive(update, for: ids, from: worker, now: clock.now)
        }
    }
}
