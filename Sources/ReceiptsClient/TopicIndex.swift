/// Which subscriptions a published update is for, and which prefixes the shared SUB sockets
/// must carry for them.
///
/// A client has one SUB per worker, shared by every subscription (per-user topics will make
/// subscriptions many). A filter goes on the sockets when the first subscription that needs it
/// comes and off when the last one goes: the index counts them, so two subscriptions with one
/// filter and one cancel keep the filter. The sockets filter by prefix; the index then takes a
/// conversation's topic exactly, since as a prefix it would also match longer conversation ids.
struct TopicIndex {
    /// One-conversation and one-user subscriptions, by their exact topic.
    private var exact: [String: Set<UInt64>] = [:]
    /// Prefix subscriptions (`""` for everything), by prefix.
    private var prefixes: [String: Set<UInt64>] = [:]
    /// How many subscriptions use each socket filter, of either kind.
    private var users: [String: Int] = [:]

    /// The socket filters in use, for a SUB made after they were added.
    var filters: Dictionary<String, Int>.Keys { users.keys }

    /// Adds a subscription.
    /// - Parameters:
    ///   - id: The subscription.
    ///   - topic: What it follows.
    /// - Returns: The filter to subscribe the sockets to, if no subscription used it yet.
    mutating func add(_ id: UInt64, _ topic: some FilteredTopic) -> String? {
        let filter = topic.filter
        if topic.isExact {
            exact[filter, default: []].insert(id)
        } else {
            prefixes[filter, default: []].insert(id)
        }
        users[filter, default: 0] += 1
        return users[filter] == 1 ? filter : nil
    }

    /// Removes a subscription added with the same topic.
    /// - Returns: The filter to unsubscribe the sockets from, if no subscription uses it any more.
    mutating func remove(_ id: UInt64, _ topic: some FilteredTopic) -> String? {
        let filter = topic.filter
        let removed: UInt64?
        if topic.isExact {
            removed = exact[filter]?.remove(id)
            if exact[filter]?.isEmpty == true { exact[filter] = nil }
        } else {
            removed = prefixes[filter]?.remove(id)
            if prefixes[filter]?.isEmpty == true { prefixes[filter] = nil }
        }
        guard removed != nil, let count = users[filter] else { return nil }
        guard count == 1 else {
            users[filter] = count - 1
            return nil
        }
        users[filter] = nil
        return filter
    }

    /// The subscriptions an update published under `topic` is for.
    /// - Parameter topic: The update's topic frame.
    func subscribers(of topic: UnsafeRawBufferPointer) -> [UInt64] {
        var ids: [UInt64] = []
        if !exact.isEmpty, let matching = exact[String(decoding: topic, as: UTF8.self)] {
            ids += matching
        }
        for (prefix, matching) in prefixes where topic.starts(with: prefix.utf8) {
            ids += matching
        }
        return ids
    }
}

/// What a subscription asks of the SUB sockets: a prefix filter, and whether only the topic
/// equal to it is meant (a conversation's or a user's topic, which as prefixes would also match
/// longer ids).
protocol FilteredTopic {
    /// The prefix given to the SUB sockets.
    var filter: String { get }
    /// Whether the subscription wants only the topic equal to `filter`.
    var isExact: Bool { get }
}
