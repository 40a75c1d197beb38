import ReceiptsCore
import ReceiptsWire

/// The client's one rule for a worker's answer that sends a request elsewhere or asks it to
/// wait: follow NOT_OWNER to the owner it names, back off on UNAVAILABLE and on `moving`, and
/// follow NOT_PRIMARY to the member of the same ordinal it names.
///
/// Ingest (per frame and per event), snapshot repairs and typed queries all ask it, each with
/// its own hop count and its own way of waiting, so the rule itself is written once. NOT_PRIMARY
/// is decided apart (``decideNotPrimary(naming:from:recentSwitches:)``): it changes which member
/// serves an ordinal for every request, not where one request goes, so ``PrimaryTracker`` asks
/// it, and keeps the switch it decides for ingest and queries alike.
package struct RoutingPolicy: Sendable {
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

    /// What to do after a NOT_PRIMARY answer.
    package enum PrimaryDecision: Hashable, Sendable {
        /// Talk to this member of the ordinal from now on (an index into its members).
        case switchMember(to: Int)
        /// Ask the same member again after this pause.
        case retry(afterMilliseconds: Int)
    }

    /// How many NOT_OWNER answers a request follows before the answer is taken as it is.
    let maxRedirects: Int
    /// The pause after UNAVAILABLE.
    let unavailableBackoffMilliseconds: Int
    /// The pause after `moving`.
    let movingBackoffMilliseconds: Int
    /// How many times an ordinal may switch members within a second.
    let maxPrimarySwitches: Int

    /// The policy a client's configuration sets.
    init(_ configuration: ReceiptsClient.Configuration) {
        self.init(
            maxRedirects: configuration.maxRedirects,
            unavailableBackoffMilliseconds: configuration.unavailableBackoffMilliseconds,
            movingBackoffMilliseconds: configuration.movingBackoffMilliseconds,
            maxPrimarySwitches: configuration.maxPrimarySwitches
        )
    }

    /// A policy with these limits (receiptctl's, which has no client configuration).
    package init(
        maxRedirects: Int,
        unavailableBackoffMilliseconds: Int,
        movingBackoffMilliseconds: Int,
        maxPrimarySwitches: Int
    ) {
        self.maxRedirects = maxRedirects
        self.unavailableBackoffMilliseconds = unavailableBackoffMilliseconds
        self.movingBackoffMilliseconds = movingBackoffMilliseconds
        self.maxPrimarySwitches = maxPrimarySwitches
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

    /// Decides what a NOT_PRIMARY answer does (deploy/REPLICATION.md section 8.2): the member
    /// named is the ordinal's primary, unless the answer names none (an election is under way),
    /// names the member that answered, or the ordinal switched too often lately (two members
    /// that each name the other, having seen an election at different times). Then the same
    /// member is asked again after ``unavailableBackoffMilliseconds``.
    /// - Parameters:
    ///   - primary: The member the answer names, as an index into its ordinal's members; nil if
    ///     it names none, or one the client does not know.
    ///   - member: The member that answered.
    ///   - recentSwitches: How many times the ordinal switched members in the last second.
    /// - Returns: Switch to the named member, or ask the same one again after a pause.
    package func decideNotPrimary(naming primary: Int?, from member: Int, recentSwitches: Int) -> PrimaryDecision {
        guard let primary, primary != member, recentSwitches < maxPrimarySwitches else {
            return .retry(afterMilliseconds: unavailableBackoffMilliseconds)
        }
        return .switchMember(to: primary)
    }
}
