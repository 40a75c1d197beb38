/// Where a worker stands in the cluster: how many workers own the conversations, and the
/// worker count change under way (deploy/SCALING.md).
///
/// It lives in the engine, and so in its snapshots, and every change to it is a log record:
/// after a restart in the middle of a move, a worker knows exactly which conversations it
/// serves, which are frozen and which it gave away.
public struct Topology: Sendable, Hashable {
    /// The epoch of the last move prepared or committed; 0 before any. (Not the publisher's
    /// run, which changes with every start of a worker.)
    public var moveEpoch: UInt64 = 0
    /// How many workers own the conversations now.
    public var workerCount: Int
    /// The count a prepared move goes to; nil when no move is under way.
    public var targetCount: Int?
    /// On a receiver: the senders whose conversations have all arrived here.
    public var completedSenders: Set<Int> = []

    /// A topology with no move recorded.
    /// - Parameter workerCount: How many workers own the conversations (at least 1).
    public init(workerCount: Int) {
        self.workerCount = max(workerCount, 1)
    }

    /// The worker that owns a conversation once the move under way (if any) is done.
    /// - Parameter conversation: The conversation id.
    /// - Returns: Its owner under the target count, or under the current one with no move.
    public func finalOwner(of conversation: String) -> Int {
        Partitioning.owner(of: conversation, workerCount: targetCount ?? workerCount)
    }
}

/// Where one conversation held by an engine stands in a move.
enum Placement: UInt8, Sendable {
    /// Served here.
    case owned = 0
    /// Being copied to its new owner: served by nobody (events and queries are answered
    /// `moving` / `UNAVAILABLE`, and retried) until it is released or the move ends.
    case frozen = 1
    /// Its new owner has it: events and queries are answered `NOT_OWNER`; the state leaves at
    /// the move's commit.
    case released = 2
}
