import ReceiptsWire

/// Where one query about a conversation goes next, without sockets or a clock of its own
/// (time is passed in): its owner by the routing count first, then the owner a NOT_OWNER
/// answer names, the same worker again after UNAVAILABLE, all within the query's deadline.
/// ``RoutingPolicy`` decides each refusal; the route keeps the hop count and the worker.
struct QueryRoute: Sendable {
    /// What to do after a reply.
    enum Step: Equatable, Sendable {
        /// Ask this worker at once (one more hop: the conversation moved, or the client's
        /// worker count is not the cluster's).
        case follow(worker: Int)
        /// Ask the same worker again at this time (frozen while it moves, or stopping).
        case retry(at: ContinuousClock.Instant)
        /// This is the answer (an error reply included).
        case answer(QueryReply)
    }

    /// The worker to ask now.
    private(set) var worker: Int
    /// When the query gives up.
    let deadline: ContinuousClock.Instant
    private let policy: RoutingPolicy
    /// NOT_OWNER answers followed so far.
    private var hops = 0

    /// A route that starts at `worker`.
    init(worker: Int, deadline: ContinuousClock.Instant, policy: RoutingPolicy) {
        self.worker = worker
        self.deadline = deadline
        self.policy = policy
    }

    /// Takes the reply of the worker last asked.
    /// - Parameters:
    ///   - reply: The reply.
    ///   - now: The time it arrived.
    ///   - canReach: Whether the client can talk to a worker (asked only for one it would follow).
    /// - Returns: Follow, retry (never at or past the deadline: the reply is the answer then), or answer.
    mutating func next(after reply: QueryReply, now: ContinuousClock.Instant, canReach: (Int) -> Bool) -> Step {
        guard case .error(let error) = reply, let refusal = RoutingPolicy.Refusal(error) else { return .answer(reply) }
        switch policy.decide(refusal, from: worker, hops: hops, canReach: canReach) {
        case .follow(let owner):
            hops += 1
            worker = owner
            return .follow(worker: owner)
        case .retry(let pause):
            let retryAt = now + .milliseconds(pause)
            return retryAt < deadline ? .retry(at: retryAt) : .answer(reply)
        case .giveUp:
            return .answer(reply)
        }
    }
}
