/// Which subscriptions a published update is for, and which prefixes the shared SUB sockets
/// must carry for them.
///
/// A client has one SUB per worker, shared by every subscription (one per signed-in user's
/// read state makes them many). A filter goes on the sockets when the first subscription that
/// needs it comes and off when the last one goes: the index counts them, so two subscriptions
/// with one filter and one cancel keep the filter. The sockets filter by prefix; the index then
/// takes a conversation's or a user's topic exactly, since as a prefix it would also match
/// longer ids.
struct TopicIndex {
    /// One-conversation and one-user subscriptions, by their exact topic.
    private var exact: [String: Set<UInt64>] = [:]
    /// Prefix subscriptions (`.everything` is the 16 one-digit conversation prefixes), by prefix.
    private var prefixes: [String: Set<UInt64>] = [:]
    /// How many subscriptions use each socket filter, of either kind.
    private var users: [String: Int] = [:]

    /// The socket filters in use, for a SUB made after they were added.
    var filters: Dictionary<String, Int>.Keys { users.keys }

    /// Adds a subscription.
    /// - Parameters:
    ///   - id: The subscription.
    ///   - topic: What it follows.
    /// - Returns: The filters to subscribe the sockets to: those no subscription used yet.
    mutating func add(_ id: UInt64, _ topic: some FilteredTopic) -> [String] {
        topic.filters.filter { filter in
            if topic.isExact {
                exact[filter, default: []].insert(id)
            } else {
                prefixes[filter, default: []].insert(id)
            }
            users[filter, default: 0] += 1
            return users[filter] == 1
        }
    }

    /// Removes a subscription added with the same topic.
    /// - Returns: The filters to unsubscribe the sockets from: those no subscription uses any more.
    mutating func remove(_ id: UInt64, _ topic: some FilteredTopic) -> [String] {
        topic.filters.filter { filter in
            let removed: UInt64?
            if topic.isExact {
                removed = exact[filter]?.remove(id)
                if exact[filter]?.isEmpty == true { exact[filter] = nil }
            } else {
                removed = prefixes[filter]?.remove(id)
                if prefixes[filter]?.isEmpty == true { prefixes[filter] = nil }
            }
            guard removed != nil, let count = users[filter] else { return false }
            guard count == 1 else {
                users[filter] = count - 1
                return false
            }
            users[filter] = nil
            return true
        }
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

/// What a subscription asks of the SUB sockets: prefix filters, and whether only the topic
/// equal to its one filter is meant (a conversation's or a user's topic, which as prefixes would
/// also match longer ids).
protocol FilteredTopic {
    /// The prefixes given to the SUB sockets.
    var filters: [String] { get }
    /// Whether the subscription wants only the topic equal to its filter.
    var isExact: Bool { get }
}
