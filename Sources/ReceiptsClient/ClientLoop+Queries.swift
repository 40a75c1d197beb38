import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// Who waits for a query's reply.
enum QueryCompletion {
    /// A caller of the public API (`id` is its request id, for cancellation).
    case caller(id: UInt64, Reply<QueryReply>)
    /// A subscription's snapshot repair of one conversation.
    case repair(subscription: UInt64, conversation: String)
}

/// A query on the wire.
struct PendingQuery {
    let completion: QueryCompletion
    let deadline: ContinuousClock.Instant
}

extension ClientLoop {
    /// Sends a query to a worker's query endpoint; the reply (or the timeout) goes to `completion`.
    func startQuery(_ query: Query, worker: Int, completion: QueryCompletion) {
        guard querySockets.indices.contains(worker) else {
            complete(completion, .failure(ReceiptsClientError(.invalidArgument, "no worker \(worker) in the cluster")))
            return
        }
        let tag = makeTag()
        let timeout: Int
        if case .repair = completion {
            // A repair retries on its own; a dead worker should not hold it up for long.
            timeout = min(configuration.queryTimeoutMilliseconds, 1000)
        } else {
            timeout = configuration.queryTimeoutMilliseconds
        }
        do {
            guard try querySockets[worker].connected().send([Self.tagFrame(tag), [], query.encode()], dontWait: true)
            else {
                complete(
                    completion,
                    .failure(ReceiptsClientError(.unavailable, "worker \(worker)'s query queue is full"))
                )
                return
            }
        } catch {
            complete(
                completion,
                .failure(ReceiptsClientError(.transport, "query send to worker \(worker) failed", cause: error))
            )
            return
        }
        queries[tag] = PendingQuery(completion: completion, deadline: clock.now + .milliseconds(timeout))
    }

    /// Stops a caller waiting for a query.
    /// - Returns: false if no such query is pending.
    func cancelQuery(id: UInt64) -> Bool {
        for (tag, query) in queries {
            guard case .caller(let caller, let reply) = query.completion, caller == id else { continue }
            queries[tag] = nil
            reply.resume(returning: .failure(ReceiptsClientError(.cancelled, "the query was cancelled")))
            return true
        }
        return false
    }

    func expireQueries(now: Instant) {
        for (tag, query) in queries where query.deadline <= now {
            queries[tag] = nil
            statistics.queryTimeouts.add(1)
            complete(
                query.completion,
                .failure(ReceiptsClientError(.timeout, "no query reply within the timeout"))
            )
        }
    }

    /// Reads every reply waiting on a worker's query socket.
    func receiveQueryReplies(worker: Int) throws(ZMQError) {
        while true {
            let received = try querySockets[worker].socket.receiveMultipart(dontWait: true) { frames in
                Self.tag(of: frames).map { tag in
                    (tag, Result { () throws(WireError) in try QueryReply.decode(frames[2]) })
                }
            }
            guard let received else { return }
            guard let (tag, decoded) = received, let query = queries.removeValue(forKey: tag) else { continue }
            switch decoded {
            case .success(let reply):
                complete(query.completion, .success(reply))
            case .failure(let error):
                statistics.malformedReplies.add(1)
                complete(
                    query.completion,
                    .failure(
                        ReceiptsClientError(
                            .malformedReply,
                            "worker \(worker) sent an undecodable QueryReply",
                            cause: error
                        )
                    )
                )
            }
        }
    }

    private func complete(_ completion: QueryCompletion, _ result: Result<QueryReply, ReceiptsClientError>) {
        switch completion {
        case .caller(_, let reply):
            reply.resume(returning: result)
        case .repair(let subscription, let conversation):
            repairArrived(result, subscription: subscription, conversation: conversation)
        }
    }
}
