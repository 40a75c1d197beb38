import ReceiptsCore

/// What a subscription of status updates follows.
public enum SubscriptionTopic: Hashable, Sendable, FilteredTopic {
    /// One conversation, starting from a snapshot of its current statuses.
    case conversation(String)
    /// Every conversation whose topic starts with this prefix (`"<4 hex digits>:"` is one
    /// partition), each from the first update seen for it.
    case prefix(String)
    /// Every conversation on every worker, each from the first update seen for it (the 16
    /// one-hex-digit prefixes, so that no user's read-state topic is followed with them).
    case everything

    /// One partition of conversations (see `Partitioning.partition(of:)`).
    /// - Parameter partition: The 16-bit partition.
    public static func partition(_ partition: UInt16) -> SubscriptionTopic {
        .prefix(Partitioning.hexPartition(partition) + ":")
    }

    /// The prefixes given to the SUB sockets: a conversation's whole topic frame (the NUL at its
    /// end makes it exact; ``TopicIndex`` matches it again among a shared socket's topics).
    var filters: [String] {
        switch self {
        case .conversation(let conversation): [Partitioning.exactTopic(for: conversation)]
        case .prefix(let prefix): [prefix]
        case .everything: Partitioning.conversationTopicPrefixes
        }
    }

    /// A one-conversation subscription takes its topic exactly.
    var isExact: Bool {
        if case .conversation = self { return true }
        return false
    }
}

/// What a subscription of read-state updates follows.
public enum ReadStateTopic: Hashable, Sendable, FilteredTopic {
    /// One user's own read state in every conversation of theirs, on every worker.
    case user(String)

    /// The user's whole topic frame (`Partitioning.exactUserTopic(for:)`), taken exactly.
    var filters: [String] {
        switch self {
        case .user(let user): [Partitioning.exactUserTopic(for: user)]
        }
    }

    var isExact: Bool { true }

    /// The user followed.
    var user: String {
        switch self {
        case .user(let user): user
        }
    }
}
