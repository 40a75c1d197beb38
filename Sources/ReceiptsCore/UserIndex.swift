/// User id -> index in the engine's user table: an open-addressing table of 4-byte entries
/// over the records' own ids, so an id is stored once (a `[String: UInt32]` stores it again
/// and costs ~30 bytes per user besides).
struct UserIndex: Sendable {
    /// 0 = empty, else 1 + user index.
    private var table: [UInt32] = []

    init() {}

    /// The index of `id`, or nil.
    func find(_ id: String, in users: [UserRecord]) -> UInt32? {
        guard !table.isEmpty else { return nil }
        let mask = table.count - 1
        var i = Self.bucket(id, mask: mask)
        while true {
            let entry = table[i]
            if entry == 0 { return nil }
            if users[Int(entry) - 1].id == id { return entry - 1 }
            i = (i + 1) & mask
        }
    }

    /// Records the user just appended to `users`.
    mutating func didAppend(to users: [UserRecord]) {
        if users.count * 10 > table.count * 7 {
            rebuild(users)
        } else {
            insert(index: users.count - 1, id: users[users.count - 1].id)
        }
    }

    /// Rebuilds the table from scratch.
    mutating func rebuild(_ users: [UserRecord]) {
        var capacity = 16
        while users.count * 10 > capacity * 7 { capacity *= 2 }
        table = Array(repeating: 0, count: capacity)
        for index in users.indices { insert(index: index, id: users[index].id) }
    }

    private mutating func insert(index: Int, id: String) {
        let mask = table.count - 1
        var i = Self.bucket(id, mask: mask)
        while table[i] != 0 { i = (i + 1) & mask }
        table[i] = UInt32(index + 1)
    }

    private static func bucket(_ id: String, mask: Int) -> Int {
        let hash = Partitioning.stableHash(id)
        return Int(truncatingIfNeeded: hash ^ (hash >> 29)) & mask
    }
}
