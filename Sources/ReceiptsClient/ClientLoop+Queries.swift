import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// Who waits for a query's reply.
enum QueryCompletion {
    /// A caller of the public API (`id` is its request id, for cancellation).
    case caller(id: UInt64, Reply<QueryReply>)
    /// A subscription's snapshot repair of one conversation, after `hops` NOT_OWNER answers.
    case repair(subscription: UInt64, conversation: String, hops: Int)
    /// A read-state subscription's repair from the worker asked.
    case readStateRepair(subscription: UInt64)
}

extension QueryCompletion {
    /// Whether a subscription waits for it (it retries on its own), not a caller.
    var isRepair: Bool {
        if case .caller = self { return false }
        return true
    }
}

/// A query on the wire.
struct PendingQuery {
    let query: Query
    let completion: QueryCompletion
    let deadline: ContinuousClock.Instant
    /// The worker asked (a repair takes the snapshot's worker as the conversation's publisher).
    let worker: Int
    /// The member of the worker's ordinal it went to last.
    var member = 0
    /// For a replicated ordinal: when to send it again to the ordinal's current member (after
    /// leaving a silent one, or after a NOT_PRIMARY answer's pause); nil for an unreplicated one.
    var resendAt: ContinuousClock.Instant?
    /// Whether ``resendAt`` is a pause a NOT_PRIMARY answer asked for: the member answered, so
    /// it is not left as silent.
    var isPaused = false
    /// Whether it goes to a standby of its ordinal, with `allow_standby` set
    /// (``ReadPreference/standbyPreferred``); false once it fell back to the primary.
    var readsStandby = false
}

extension ClientLoop {
    /// Sends a query to a worker's query endpoint; the reply (or the timeout) goes to `completion`.
    ///
    /// A replicated ordinal's query goes to its current member (``PrimaryTracker``), follows
    /// NOT_PRIMARY answers to the member they name, and leaves a member that stays silent for
    /// the acknowledgement timeout for the next one, until its deadline: callers and repairs see
    /// the primary's answer, never NOT_PRIMARY. With ``ReadPreference/standbyPreferred`` a
    /// caller's follower read (``Query/isFollowerRead``) goes to a standby first, and to the
    /// primary if the standby answers UNAVAILABLE or NOT_PRIMARY or stays silent.
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
        let timeout: Int
        if completion.isRepair {
            // A repair retries on its own; a dead worker should not hold it up for long.
            timeout = min(configuration.queryTimeoutMilliseconds, 1000)
        } else {
            timeout = configuration.queryTimeoutMilliseconds
        }
        var due = clock.now + .milliseconds(timeout)
        if let deadline { due = min(due, deadline) }
        var pending = PendingQuery(query: query, completion: completion, deadline: due, worker: worker)
        if case .caller = completion, configuration.readFrom == .standbyPreferred, query.isFollowerRead {
            pending.readsStandby = true
        }
        sendQuery(pending, tag: makeTag())
    }

    /// Puts a query on its ordinal's current member's socket (or a standby's, for a follower
    /// read of an ordinal with several members) and waits for its reply; answers its waiter
    /// with the failure if it cannot leave.
    /// - Parameters:
    ///   - pending: The query.
    ///   - tag: Its tag (kept when it is sent again).
    private func sendQuery(_ pending: PendingQuery, tag: UInt64) {
        var pending = pending
        let worker = pending.worker
        let standby = pending.readsStandby ? primaries.standby(of: worker) : nil
        pending.readsStandby = standby != nil
        pending.member = standby ?? primaries.current(of: worker)
        pending.isPaused = false
        pending.resendAt =
            querySockets[worker].count > 1
            ? clock.now + .milliseconds(configuration.acknowledgementTimeoutMilliseconds) : nil
        let failure: ReceiptsClientError?
        do {
            let socket = try querySockets[worker][pending.member].connected()
            let sent = try socket.send(
                [Self.tagFrame(tag), [], pending.query.encode(allowStandby: pending.readsStandby)],
                dontWait: true
            )
            failure = sent ? nil : ReceiptsClientError(.unavailable, "worker \(worker)'s query queue is full")
        } catch {
            failure = ReceiptsClientError(.transport, "query send to worker \(worker) failed", cause: error)
        }
        if let failure {
            queries[tag] = nil
            complete(pending.completion, .failure(failure), worker: worker)
        } else {
            queries[tag] = pending
        }
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

    /// Fails the queries past their deadline and sends again those due to go to another member
    /// (or to the same after a pause). A member that let a query go unanswered that long is left
    /// for the next member of its ordinal, if it has several.
    func expireQueries(now: Instant) {
        for (tag, query) in queries {
            if query.deadline <= now {
                queries[tag] = nil
                if !query.isPaused { _ = primaries.leave(query.member, of: query.worker) }
                statistics.queryTimeouts.add(1)
                complete(
                    query.completion,
                    .failure(ReceiptsClientError(.timeout, "no query reply within the timeout")),
                    worker: query.worker
                )
            } else if let resendAt = query.resendAt, resendAt <= now {
                if query.readsStandby {
                    fallBackToPrimary(query, tag: tag)
                    continue
                }
                if !query.isPaused { _ = primaries.leave(query.member, of: query.worker) }
                sendQuery(query, tag: tag)
            }
        }
    }

    /// Reads every reply waiting on a member's query socket.
    func receiveQueryReplies(worker: Int, member: Int) throws(ZMQError) {
        while true {
            let received = try querySockets[worker][member].socket.receiveMultipart(dontWait: true) { frames in
                Self.tag(of: frames).map { tag in
                    (tag, Result { () throws(WireError) in try QueryReply.decodeServed(frames[2]) })
                }
            }
            guard let received else { return }
            guard let (tag, decoded) = received, let query = queries[tag] else { continue }
            if case .success((.error(let error), _)) = decoded {
                if query.readsStandby, member == query.member, error.code == .notPrimary || error.code == .unavailable {
                    fallBackToPrimary(query, tag: tag)
                    continue
                }
                if error.code == .notPrimary {
                    notPrimary(error, tag: tag, query: query, member: member)
                    continue
                }
            }
            queries[tag] = nil
            switch decoded {
            case .success((let reply, let servedBy)):
                if servedBy?.role == .standby { statistics.standbyReads.add(1) }
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

    /// A member answered a query NOT_PRIMARY: the query goes to the primary it names at once,
    /// or to the same member again after a pause. An answer of a member the query was sent
    /// away from already is dropped.
    private func notPrimary(_ error: ErrorReply, tag: UInt64, query: PendingQuery, member: Int) {
        guard member == query.member else { return }
        let now = clock.now
        switch primaries.notPrimary(error.primary, ordinal: query.worker, member: member, now: now) {
        case .switchMember:
            sendQuery(query, tag: tag)
        case .retry(let pause):
            var paused = query
            paused.resendAt = now + .milliseconds(pause)
            paused.isPaused = true
            queries[tag] = paused
            statistics.queryRetries.add(1)
        }
    }

    /// Sends a follower read to its ordinal's primary instead of the standby that refused it
    /// or stayed silent.
    private func fallBackToPrimary(_ query: PendingQuery, tag: UInt64) {
        var primary = query
        primary.readsStandby = false
        statistics.standbyFallbacks.add(1)
        sendQuery(primary, tag: tag)
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
        case .readStateRepair(let subscription):
            readStateRepairArrived(result, subscription: subscription, worker: worker)
        }
    }
}
