import ReceiptsCore

/// The one subscription of a user's read-state topic that the gateway runs while the user has a
/// tab open, and what it learnt: the badges of all of that user's tabs (on every device) come
/// from it.
struct ReadStateFollower {
    /// Tells this follower from the user's earlier and later ones: a cancelled subscription may
    /// still hand over an update it had taken.
    let id: Int
    /// Iterates the subscription; cancelled when the user's last tab closes.
    let task: Task<Void, Never>
    /// The user's newest read state in each conversation, by the backend's conversation id.
    var states: [String: UnreadCount] = [:]
    /// The badge each conversation has on the user's tabs, by the backend's conversation id.
    var shown: [String: UnreadView] = [:]
    /// The badge of each thread the user holds a place in, by the backend's root message id.
    var threads: [String: ThreadView] = [:]
}
