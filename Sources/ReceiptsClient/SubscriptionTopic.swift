import ReceiptsCore

/// What a subscription follows.
public enum SubscriptionTopic: Hashable, Sendable {
    /// One conversation, starting from a snapshot of its current statuses.
    case conversation(String)
    /// Every conversation whose topic starts with this prefix (`"<4 hex digits>:"` is one
    /// partition), each from the first update seen for it.
    case prefix(String)
    /// Every conversation on every worker, each from the first update seen for it.
    case everything

    /// One partition of conversations (see `Partitioning.partition(of:)`).
    /// - Parameter partition: The 16-bit partition.
    public static func partition(_ partition: UInt16) -> SubscriptionTopic {
        let digits = String(partition, radix: 16)
        return .prefix(String(repeating: "0", count: 4 - digits.count) + digits + ":")
    }

    /// The prefix given to the SUB sockets (a conversation's exact topic is matched again by
    /// ``TopicIndex``).
    var filter: String {
        switch self {
        case .conversation(let conversation): Partitioning.topic(for: conversation)
        case .prefix(let prefix): prefix
        case .everything: ""
        }
    }
}
