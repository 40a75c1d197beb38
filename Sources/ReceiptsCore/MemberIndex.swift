/// User index -> member slot of one conversation, without a `Dictionary`.
///
/// Small conversations (most of them) are searched linearly and allocate nothing; larger ones
/// get a `SlotTable` of 1-byte entries up to about 180 members (then 2-byte), about 2 bytes
/// per member instead of the ~25 a `[UInt32: UInt32]` costs (SPEC §8: <= 64 bytes per
/// (conversation, member)).
struct MemberIndex: Sendable {
    /// Linear search up to this many members.
    static let linearLimit = 16

    /// Slots by user; empty while the conversation is small.
    private var table = SlotTable()

    init() {}

    /// The slot of `user`, or nil.
    @inline(__always)
    func find(_ user: UInt32, in members: [MemberRecord]) -> UInt32? {
        members.withUnsafeBufferPointer { members in
            if members.count <= Self.linearLimit {
                for slot in members.indices where members[slot].user == user { return UInt32(slot) }
                return nil
            }
            return table.find(hash: Self.hash(user)) { members[$0].user == user }.map { UInt32($0) }
        }
    }

    /// Records the slot just appended to `members`.
    mutating func didAppend(to members: [MemberRecord]) {
        let count = members.count
        if count <= Self.linearLimit { return }
        if table.needsRebuild(forCount: count) {
            rebuild(members)
        } else {
            table.insert(hash: Self.hash(members[count - 1].user), position: count - 1)
        }
    }

    /// Rebuilds the table from scratch (after decoding).
    mutating func rebuild(_ members: [MemberRecord]) {
        table.rebuild(count: members.count > Self.linearLimit ? members.count : 0) { Self.hash(members[$0].user) }
    }

    @inline(__always)
    private static func hash(_ user: UInt32) -> UInt64 {
        UInt64(user) &* 0x9e37_79b9_7f4a_7c15
    }
}
