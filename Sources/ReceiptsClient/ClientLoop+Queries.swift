import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// Who waits for a query's reply.
enum QueryCompletion {
    /// A caller of the public API (`id` is its request id, for cancellation).
    case caller(id: UInt64, Reply<QueryReply>)
    /// A subscription's snapshot repair of one conversation, after `hops` NOT_OWNER answers.
    case repair(subscription: UInt64, conversation: String, hops: Int)
}

/// A query on the wire.
struct PendingQuery {
    let completion: QueryCompletion
    let deadline: ContinuousClock.Instant
    /// The worker asked (a repair takes the snapshot's worker as the conversation's publisher).
    let worker: Int
}

extension ClientLoop {
    /// Sends a query to a worker's query endpoint; the reply (or the timeout) goes to `completion`.
    /// - Parameters:
    ///   - query: The query.
    ///   - worker: Any ordinal the cluster knows the endpoints of, routing count or not.
    ///   - deadline: When to give up at the latest; the configured timeout applies too.
    ///   - completion: Who takes the reply.
    func startQuery(_ query: Query, worker: Int, deadline: Instant? = nil, completion: QueryCompletion) {
        guard reach(worker) else {
            complete(
                completion,
                .failure(ReceiptsClientError(.invalidArgument, "no worker \(worker) in the cluster")),
                worker: worker
            )
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
                    .failure(ReceiptsClientError(.unavailable, "worker \(worker)'s query queue is full")),
                    worker: worker
                )
                return
            }
        } catch {
            complete(
                completion,
                .failure(ReceiptsClientError(.transport, "query send to worker \(worker) failed", cause: error)),
                worker: worker
            )
            return
        }
        var due = clock.now + .milliseconds(timeout)
        if let deadline { due = min(due, deadline) }
        queries[tag] = PendingQuery(completion: completion, deadline: due, worker: worker)
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
                .failure(ReceiptsClientError(.timeout, "no query reply within the timeout")),
                worker: query.worker
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
                complete(query.completion, .success(reply), worker: worker)
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
                    ),
                    worker: worker
                )
            }
        }
    }

    /// Hands a query's result to whoever waits for it.
    /// - Parameter worker: The worker that was asked.
    private func complete(
        _ completion: QueryCompletion,
        _ result: Result<QueryReply, ReceiptsClientError>,
        worker: Int
    ) {
        switch completion {
        case .caller(_, let reply):
            reply.resume(returning: result)
        case .repair(let subscription, let conversation, let hops):
            repairArrived(result, subscription: subscription, conversation: conversation, worker: worker, hops: hops)
        }
    }
}
