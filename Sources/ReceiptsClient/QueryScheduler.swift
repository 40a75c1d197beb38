import ReceiptsCore
import ReceiptsWire

/// What a ``QueryScheduler`` asks of its owner: the query sockets, and whoever waits for a
/// query's answer. `ClientLoop` in service; a recording fake in tests.
protocol QueryEnvironment: AnyObject {
    /// Makes sure queries can go to a worker (see ``IngestEnvironment/reach(_:)``).
    func reach(_ worker: Int) -> Bool

    /// Puts a query on a member's query socket without waiting.
    /// - Parameters:
    ///   - tag: The query's tag, returned with its reply.
    ///   - body: The encoded `Query`.
    ///   - worker: The worker's ordinal.
    ///   - member: Which member of the ordinal: an index into ``Cluster/members(of:)``.
    /// - Returns: nil once queued, else why it could not be.
    func transmitQuery(tag: UInt64, body: [UInt8], to worker: Int, member: Int) -> ReceiptsClientError?

    /// Hands a query's result to whoever waits for it.
    /// - Parameter worker: The worker that was asked.
    func complete(_ completion: QueryCompletion, _ result: Result<QueryReply, ReceiptsClientError>, worker: Int)
}

/// Who waits for a query's reply.
enum QueryCompletion {
    /// A caller of the public API (`id` is its request id, for cancellation).
    case caller(id: UInt64, Reply<QueryReply>)
    /// A subscription's snapshot repair.
    case repair(SubscriptionScheduler.Repair)

    /// Whether a subscription waits for it (it retries on its own), not a caller.
    var isRepair: Bool {
        if case .caller = self { return false }
        return true
    }
}

/// The client's queries on the wire, without sockets or a clock of its own (time is passed in),
/// as ``IngestScheduler`` is its sends.
///
/// A replicated ordinal's query goes to its current member (``PrimaryTracker``), follows
/// NOT_PRIMARY answers to the member they name, and leaves a member that stays silent for the
/// acknowledgement timeout for the next one, until its deadline: callers and repairs see the
/// primary's answer, never NOT_PRIMARY. With ``ReadPreference/standbyPreferred`` a caller's
/// follower read (``Query/isFollowerRead``) goes to a standby first, and to the primary if the
/// standby answers UNAVAILABLE or NOT_PRIMARY or stays silent. Replies are matched by tag, so
/// they may come in any order, late, or twice.
///
/// Single-threaded: every method runs on the thread that owns the environment.
final class QueryScheduler {
    /// A query on the wire.
    private struct Pending {
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
        /// Whether it goes to a standby of its ordinal, with `allow_standby` set; false once it
        /// fell back to the primary.
        var readsStandby = false
    }

    private let configuration: ReceiptsClient.Configuration
    private let primaries: PrimaryTracker
    private let statistics: ClientStatistics
    private unowned let environment: any QueryEnvironment
    /// Queries waiting for their reply, by tag.
    private var pending: [UInt64: Pending] = [:]
    private var nextTag: UInt64 = 1

    /// - Parameters:
    ///   - primaries: The member each ordinal is served by, shared with ingest.
    ///   - environment: Where queries and answers go; it must outlive the scheduler.
    init(
        configuration: ReceiptsClient.Configuration,
        primaries: PrimaryTracker,
        statistics: ClientStatistics,
        environment: any QueryEnvironment
    ) {
        self.configuration = configuration
        self.primaries = primaries
        self.statistics = statistics
        self.environment = environment
    }

    /// The earliest deadline or re-sending among the queries on the wire.
    var nextDeadline: ContinuousClock.Instant? {
        pending.values.map { min($0.deadline, $0.resendAt ?? $0.deadline) }.min()
    }

    /// Sends a query to a worker's query endpoint; the reply (or the timeout) goes to `completion`.
    /// - Parameters:
    ///   - worker: Any ordinal the cluster knows the endpoints of, routing count or not.
    ///   - deadline: When to give up at the latest; the configured timeout applies too.
    func start(
        _ query: Query,
        worker: Int,
        deadline: ContinuousClock.Instant? = nil,
        completion: QueryCompletion,
        now: ContinuousClock.Instant
    ) {
        guard environment.reach(worker) else {
            environment.complete(
                completion,
                .failure(ReceiptsClientError(.invalidArgument, "no worker \(worker) in the cluster")),
                worker: worker
            )
            return
        }
        // A repair retries on its own; a dead worker should not hold it up for long.
        let timeout =
            completion.isRepair
            ? min(configuration.queryTimeoutMilliseconds, 1000) : configuration.queryTimeoutMilliseconds
        var due = now + .milliseconds(timeout)
        if let deadline { due = min(due, deadline) }
        var query = Pending(query: query, completion: completion, deadline: due, worker: worker)
        if case .caller = completion, configuration.readFrom == .standbyPreferred, query.query.isFollowerRead {
            query.readsStandby = true
        }
        let tag = nextTag
        nextTag += 1
        send(query, tag: tag, now: now)
    }

    /// Puts a query on its ordinal's current member's socket (or a standby's, for a follower
    /// read of an ordinal with several members); answers its waiter with the failure if it
    /// cannot leave.
    /// - Parameter tag: Its tag (kept when it is sent again).
    private func send(_ query: Pending, tag: UInt64, now: ContinuousClock.Instant) {
        var query = query
        let worker = query.worker
        let standby = query.readsStandby ? primaries.standby(of: worker) : nil
        query.readsStandby = standby != nil
        query.member = standby ?? primaries.current(of: worker)
        query.isPaused = false
        query.resendAt =
            configuration.cluster.members(of: worker).count > 1
            ? now + .milliseconds(configuration.acknowledgementTimeoutMilliseconds) : nil
        let body = query.query.encode(allowStandby: query.readsStandby)
        if let failure = environment.transmitQuery(tag: tag, body: body, to: worker, member: query.member) {
            pending[tag] = nil
            environment.complete(query.completion, .failure(failure), worker: worker)
        } else {
            pending[tag] = query
        }
    }

    /// Stops a caller waiting for a query.
    /// - Returns: false if no such query is pending.
    func cancel(id: UInt64) -> Bool {
        for (tag, query) in pending {
            guard case .caller(let caller, let reply) = query.completion, caller == id else { continue }
            pending[tag] = nil
            reply.resume(returning: .failure(ReceiptsClientError(.cancelled, "the query was cancelled")))
            return true
        }
        return false
    }

    /// Fails the queries past their deadline and sends again those due to go to another member
    /// (or to the same after a pause). A member that let a query go unanswered that long is left
    /// for the next member of its ordinal, if it has several.
    func expire(now: ContinuousClock.Instant) {
        for (tag, query) in pending {
            if query.deadline <= now {
                pending[tag] = nil
                if !query.isPaused { _ = primaries.leave(query.member, of: query.worker) }
                statistics.queryTimeouts.add(1)
                environment.complete(
                    query.completion,
                    .failure(ReceiptsClientError(.timeout, "no query reply within the timeout")),
                    worker: query.worker
                )
            } else if let resendAt = query.resendAt, resendAt <= now {
                if query.readsStandby {
                    fallBackToPrimary(query, tag: tag, now: now)
                    continue
                }
                if !query.isPaused { _ = primaries.leave(query.member, of: query.worker) }
                send(query, tag: tag, now: now)
            }
        }
    }

    /// A reply from a member of a worker's ordinal, decoded (or not) with who served it.
    func replied(
        tag: UInt64,
        _ decoded: Result<(QueryReply, ServedBy?), WireError>,
        worker: Int,
        member: Int,
        now: ContinuousClock.Instant
    ) {
        guard let query = pending[tag] else { return }
        if case .success((.error(let error), _)) = decoded {
            if query.readsStandby, member == query.member, error.code == .notPrimary || error.code == .unavailable {
                return fallBackToPrimary(query, tag: tag, now: now)
            }
            if error.code == .notPrimary {
                return notPrimary(error, tag: tag, query: query, member: member, now: now)
            }
        }
        pending[tag] = nil
        switch decoded {
        case .success((let reply, let servedBy)):
            if servedBy?.role == .standby { statistics.standbyReads.add(1) }
            environment.complete(query.completion, .success(reply), worker: worker)
        case .failure(let error):
            statistics.malformedReplies.add(1)
            environment.complete(
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

    /// A member answered a query NOT_PRIMARY: the query goes to the primary it names at once,
    /// or to the same member again after a pause. An answer of a member the query was sent
    /// away from already is dropped.
    private func notPrimary(
        _ error: ErrorReply,
        tag: UInt64,
        query: Pending,
        member: Int,
        now: ContinuousClock.Instant
    ) {
        guard member == query.member else { return }
        switch primaries.notPrimary(error.primary, ordinal: query.worker, member: member, now: now) {
        case .switchMember:
            send(query, tag: tag, now: now)
        case .retry(let pause):
            var paused = query
            paused.resendAt = now + .milliseconds(pause)
            paused.isPaused = true
            pending[tag] = paused
            statistics.queryRetries.add(1)
        }
    }

    /// Sends a follower read to its ordinal's primary instead of the standby that refused it
    /// or stayed silent.
    private func fallBackToPrimary(_ query: Pending, tag: UInt64, now: ContinuousClock.Instant) {
        var primary = query
        primary.readsStandby = false
        statistics.standbyFallbacks.add(1)
        send(primary, tag: tag, now: now)
    }

    /// Fails every caller waiting (the client is shutting down); repairs are dropped.
    func failAll(_ error: ReceiptsClientError) {
        for query in pending.values {
            if case .caller(_, let reply) = query.completion { reply.resume(returning: .failure(error)) }
        }
        pending = [:]
    }
}
