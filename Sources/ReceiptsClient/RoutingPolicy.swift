import ReceiptsCore
import ReceiptsWire

/// The client's one rule for a worker's answer that sends a request elsewhere or asks it to
/// wait: follow NOT_OWNER to the owner it names, back off on UNAVAILABLE and on `moving`.
///
/// Ingest (per frame and per event), snapshot repairs and typed queries all ask it, each with
/// its own hop count and its own way of waiting, so the rule itself is written once: a new
/// answer of that kind (NOT_PRIMARY naming a replicated ordinal's primary) is one more
/// ``Refusal`` case and one more branch of ``decide(_:from:hops:canReach:)``.
struct RoutingPolicy: Sendable {
    /// An answer the policy decides on.
    enum Refusal: Hashable, Sendable {
        /// The worker asked does not own the conversation (the cluster's worker count differs
        /// from the client's, or the conversation moved); it names the owner if it knows one.
        case notOwner(owner: Int?)
        /// The worker cannot take the request now: it is stopping, its log failed, the
        /// connection has as many frames waiting as it takes, or the conversation is frozen
        /// while it moves.
        case unavailable
        /// The event's conversation is being copied to another worker: the same event goes to
        /// the same worker again, until that worker applies it or names the new owner.
        case moving

        /// The refusal an error reply (a whole frame's or a query's) carries, if any.
        init?(_ error: ErrorReply) {
            switch error.code {
            case .notOwner: self = .notOwner(owner: error.ownerWorker)
            case .unavailable: self = .unavailable
            default: return nil
            }
        }

        /// The refusal one event's rejection carries, if any.
        init?(_ rejection: Rejection) {
            switch rejection.reason {
            case .notOwner: self = .notOwner(owner: rejection.ownerWorker)
            case .moving: self = .moving
            default: return nil
            }
        }
    }

    /// What to do with a refused request.
    enum Decision: Hashable, Sendable {
        /// Ask this worker instead (one more hop).
        case follow(worker: Int)
        /// Ask the same worker again after this pause.
        case retry(afterMilliseconds: Int)
        /// Take the answer as it is.
        case giveUp
    }

    /// How many NOT_OWNER answers a request follows before the answer is taken as it is.
    let maxRedirects: Int
    /// The pause after UNAVAILABLE.
    let unavailableBackoffMilliseconds: Int
    /// The pause after `moving`.
    let movingBackoffMilliseconds: Int

    /// The policy a client's configuration sets.
    init(_ configuration: ReceiptsClient.Configuration) {
        maxRedirects = configuration.maxRedirects
        unavailableBackoffMilliseconds = configuration.unavailableBackoffMilliseconds
        movingBackoffMilliseconds = configuration.movingBackoffMilliseconds
    }

    /// Decides what a refused request does next.
    /// - Parameters:
    ///   - refusal: The answer.
    ///   - worker: The worker that gave it.
    ///   - hops: How many NOT_OWNER answers the request has followed so far.
    ///   - canReach: Whether the client can talk to a worker (it knows its endpoints and has,
    ///     or could make, its sockets); asked last, only for a worker the request would follow.
    /// - Returns: Follow a named owner, retry after a pause, or give up.
    func decide(_ refusal: Refusal, from worker: Int, hops: Int, canReach: (Int) -> Bool) -> Decision {
        switch refusal {
        case .notOwner(let owner):
            // A worker naming itself, a chain longer than a worker count change can make, or an
            // ordinal the client cannot name: the answer stands.
            guard let owner, owner != worker, hops < maxRedirects, canReach(owner) else { return .giveUp }
            return .follow(worker: owner)
        case .unavailable:
            return .retry(afterMilliseconds: unavailableBackoffMilliseconds)
        case .moving:
            return .retry(afterMilliseconds: movingBackoffMilliseconds)
        }
    }
}
