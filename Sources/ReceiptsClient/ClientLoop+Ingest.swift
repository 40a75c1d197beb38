import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// The sockets, the outbox and the callers behind the ``IngestScheduler``.
extension ClientLoop: IngestEnvironment {
    func transmit(tag: UInt64, body: [UInt8], to worker: Int, member: Int) -> Bool {
        do {
            return try ingestSockets[worker][member].connected().send([Self.tagFrame(tag), [], body], dontWait: true)
        } catch {
            logger.warning(
                "ingest send failed",
                metadata: ["receipts.worker": "\(worker)", "receipts.member": "\(member)", "error": "\(error)"]
            )
            return false
        }
    }

    func isDurable(_ position: LogPosition) throws(ReceiptsClientError) -> Bool {
        guard let outbox else { return true }
        return try outbox.durability.isDurable(position)
    }

    func answer(_ request: UInt64, _ result: Result<[EventOutcome], ReceiptsClientError>, outboxIDs: [EventID]) {
        if !outboxIDs.isEmpty {
            if case .failure(let failure) = result {
                logger.error("events in the outbox were refused", metadata: ["error": "\(failure)"])
            }
            outbox?.answered(outboxIDs)
        }
        sendReplies.removeValue(forKey: request)?.resume(returning: result)
    }

    /// Reads every acknowledgement waiting on a member's ingest socket.
    func receiveIngestReplies(worker: Int, member: Int) throws(ZMQError) {
        while true {
            let received = try ingestSockets[worker][member].socket.receiveMultipart(dontWait: true) {
                frames -> (UInt64, IngestReply?)? in
                guard let tag = Self.tag(of: frames) else { return nil }
                return (tag, try? IngestReply.decode(frames[2]))
            }
            guard let received else { return }
            guard let (tag, reply) = received else { continue }  // not ours
            scheduler.acknowledged(reply, tag: tag, worker: worker, member: member, now: clock.now)
        }
    }
}
