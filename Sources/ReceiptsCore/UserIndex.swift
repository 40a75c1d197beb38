/// User id -> index in the engine's user table: a `SlotTable` over the records' own ids, so an
/// id is stored once (a `[String: UInt32]` stores it again and costs ~30 bytes per user besides).
struct UserIndex: Sendable {
    /// User indexes by the hash of the id.
    private var table = SlotTable()

    init() {}

    /// The index of `id`, or nil.
    @inline(__always)
    func find(_ id: String, in users: [UserRecord]) -> UInt32? {
        let hash = ByteHash.hash(id)
        return users.withUnsafeBufferPointer { users in
            table.find(hash: hash) { users[$0].id == id }.map { UInt32($0) }
        }
    }

    /// Records the user just appended to `users`.
    mutating func didAppend(to users: [UserRecord]) {
        if table.needsRebuild(forCount: users.count) {
            rebuild(users)
        } else {
            table.insert(hash: ByteHash.hash(users[users.count - 1].id), position: users.count - 1)
        }
    }

    /// Rebuilds the table from scratch.
    mutating func rebuild(_ users: [UserRecord]) {
        table.rebuild(count: users.count) { ByteHash.hash(users[$0].id) }
    }
}
