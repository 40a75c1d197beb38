/// User index -> member slot of one conversation, without a `Dictionary`.
///
/// Small conversations (most of them) are searched linearly and allocate nothing; larger ones
/// get an open-addressing table of 4-byte entries, about 6 bytes per member instead of the
/// ~25 a `[UInt32: UInt32]` costs (SPEC §8: <= 64 bytes per (conversation, member)).
struct MemberIndex: Sendable {
    /// Linear search up to this many members.
    static let linearLimit = 16

    /// 0 = empty, else 1 + member slot. Empty while the conversation is small.
    private var table: [UInt32] = []

    init() {}

    /// The slot of `user`, or nil.
    @inline(__always)
    func find(_ user: UInt32, in members: [MemberRecord]) -> UInt32? {
        if table.isEmpty {
            for slot in members.indices where members[slot].user == user { return UInt32(slot) }
            return nil
        }
        let mask = table.count - 1
        var i = Self.bucket(user, mask: mask)
        while true {
            let entry = table[i]
            if entry == 0 { return nil }
            if members[Int(entry) - 1].user == user { return entry - 1 }
            i = (i + 1) & mask
        }
    }

    /// Records the slot just appended to `members`.
    mutating func didAppend(to members: [MemberRecord]) {
        let count = members.count
        if count <= Self.linearLimit { return }
        if table.isEmpty || count * 10 > table.count * 7 {
            rebuild(members)
        } else {
            insert(slot: count - 1, user: members[count - 1].user)
        }
    }

    /// Rebuilds the table from scratch (after decoding).
    mutating func rebuild(_ members: [MemberRecord]) {
        guard members.count > Self.linearLimit else {
            table = []
            return
        }
        var capacity = 16
        while members.count * 10 > capacity * 7 { capacity *= 2 }
        table = Array(repeating: 0, count: capacity)
        for slot in members.indices { insert(slot: slot, user: members[slot].user) }
    }

    private mutating func insert(slot: Int, user: UInt32) {
        let mask = table.count - 1
        var i = Self.bucket(user, mask: mask)
        while table[i] != 0 { i = (i + 1) & mask }
        table[i] = UInt32(slot + 1)
    }

    @inline(__always)
    private static func bucket(_ user: UInt32, mask: Int) -> Int {
        Int(truncatingIfNeeded: (UInt64(user) &* 0x9e37_79b9_7f4a_7c15) >> 32) & mask
    }
}
