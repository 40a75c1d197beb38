/// When a subscription asks for snapshots, without sockets or a clock of its own (time is
/// passed in): at most one snapshot asked per key at a time (a conversation for a status
/// subscription, a worker for a read-state one), repairs due later (a retry, or a consumer
/// that had no room), and the slow joiner's one extra round once the subscription's filters
/// had time to reach the publishers. Status and read-state subscriptions both keep one.
struct RepairSchedule<Key: Hashable & Sendable>: Sendable {
    /// Keys whose snapshot is asked for now.
    private var asking: Set<Key> = []
    /// Keys to repair once their time comes.
    private var due: [Key: ContinuousClock.Instant] = [:]
    /// When the slow joiner's round is due (nil once taken, or if the subscription takes none).
    private var settleAt: ContinuousClock.Instant?

    /// A schedule with nothing asked or due.
    /// - Parameter settleAt: When to take the slow joiner's round, if the subscription takes one.
    init(settleAt: ContinuousClock.Instant? = nil) {
        self.settleAt = settleAt
    }

    /// Starts asking for a key's snapshot, which cancels a repair due for it.
    /// - Returns: false if one is asked for already (nothing changes then).
    mutating func ask(_ key: Key) -> Bool {
        guard asking.insert(key).inserted else { return false }
        due[key] = nil
        return true
    }

    /// Keeps asking for a key whose answer sent the ask elsewhere (a NOT_OWNER redirect to the
    /// owner it names): a repair due for it stays due.
    mutating func askElsewhere(_ key: Key) {
        asking.insert(key)
    }

    /// Takes a key's answer.
    /// - Returns: false if none was asked for (a late answer of an ask already answered).
    mutating func answered(_ key: Key) -> Bool {
        asking.remove(key) != nil
    }

    /// Repairs a key at `time`, unless a repair is due for it already (the one scheduled first
    /// stands, whichever time is earlier).
    mutating func schedule(_ key: Key, at time: ContinuousClock.Instant) {
        guard due[key] == nil else { return }
        due[key] = time
    }

    /// Takes what came due by `now`.
    /// - Returns: whether the slow joiner's round did (it comes once), and the keys whose
    ///   repair did, in the order they were due.
    mutating func takeDue(now: ContinuousClock.Instant) -> (settled: Bool, keys: [Key]) {
        var settled = false
        if let settleAt, settleAt <= now {
            self.settleAt = nil
            settled = true
        }
        let keys = due.filter { $0.value <= now }.sorted { $0.value < $1.value }.map(\.key)
        for key in keys { due[key] = nil }
        return (settled, keys)
    }

    /// The earliest time something comes due, if anything will.
    var nextTimer: ContinuousClock.Instant? {
        let earliest = due.values.min()
        guard let settleAt else { return earliest }
        return min(earliest ?? settleAt, settleAt)
    }
}
