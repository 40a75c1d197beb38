import ReceiptsWire
import ZeroMQ

extension ClientLoop: QueryEnvironment {
    func transmitQuery(tag: UInt64, body: [UInt8], to worker: Int, member: Int) -> ReceiptsClientError? {
        do {
            let socket = try querySockets[worker][member].connected()
            let sent = try socket.send([Self.tagFrame(tag), [], body], dontWait: true)
            return sent ? nil : ReceiptsClientError(.unavailable, "worker \(worker)'s query queue is full")
        } catch {
            return ReceiptsClientError(.transport, "query send to worker \(worker) failed", cause: error)
        }
    }

    func complete(_ completion: QueryCompletion, _ result: Result<QueryReply, ReceiptsClientError>, worker: Int) {
        switch completion {
        case .caller(_, let reply):
            reply.resume(returning: result)
        case .repair(let repair):
            subscriptions.snapshotArrived(result, for: repair, from: worker, now: clock.now)
        }
    }

    /// Reads every reply waiting on a member's query socket and hands it to the scheduler.
    func receiveQueryReplies(worker: Int, member: Int) throws(ZMQError) {
        while true {
            let received = try querySockets[worker][member].socket.receiveMultipart(dontWait: true) { frames in
                Self.tag(of: frames).map { tag in
                    (tag, Result { () throws(WireError) in try QueryReply.decodeServed(frames[2]) })
                }
            }
            guard let received else { return }
            guard let (tag, decoded) = received else { continue }
            queries.replied(
                tag: tag,
                decoded.map { ($0.reply, $0.servedBy) },
                worker: worker,
                member: member,
                now: clock.now
            )
        }
    }
}
