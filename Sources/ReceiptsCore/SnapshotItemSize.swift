/// The fewest bytes each kind of item in an engine snapshot takes: its fixed-size fields, and
/// 4 for the count in front of each string or list (which may be empty). The decoder checks
/// every count against what remains (`SnapshotReader.readCount(itemSize:)`), so a garbage count
/// cannot make it allocate gigabytes; the sizes follow the layout that
/// `ReceiptEngine.snapshot` writes.
enum SnapshotItemSize {
    private static let count = 4
    private static let u8 = 1
    private static let u32 = 4
    private static let u64 = 8

    /// A user: id, deleted, shares reads, the list of its conversations.
    static let user = count + u8 + u8 + count
    /// A conversation: id, kind, base, last sequence, then the counts of its messages, message
    /// id bytes, message id ends, members, read advances and former memberships.
    static let conversation = count + u8 + u32 + u32 + count + count + count + count + count + count
    /// A message: sent, delivered and read times, sender, counted, delivered and read counts,
    /// flags, status.
    static let message = u64 + u64 + u64 + u32 + u32 + u32 + u32 + u8 + u8
    /// A member: user, joined after, delivered up to, read up to, visible read up to, last
    /// normal sent, delivered head, visible head, flags.
    static let member = 8 * u32 + u8
    /// A read advance: up to, previous, time.
    static let advance = u32 + u32 + u64
    /// A former membership: member, joined after, left after, delivered up to, visible read up
    /// to, by deletion.
    static let formerMembership = 5 * u32 + u8
    /// A named mention: sequence, member slot.
    static let mention = u32 + u32
    /// A thread: root id, root sequence, the counts of its replies and members.
    static let thread = count + u32 + count + count
    /// A thread member: slot, three watermarks, two chain heads, flags, the count of its frozen
    /// watermarks.
    static let threadMember = 6 * u32 + u8 + count
    /// Frozen thread watermarks: left after, delivered up to, visible read up to.
    static let frozenThreadWatermarks = 3 * u32
    /// A held receipt: serial, conversation, message id, user id, kind, time, held at (and from
    /// version 6 its thread, not counted here: this is the least any version writes).
    static let heldReceipt = u64 + u32 + count + count + u8 + u64 + u64
    /// A conversation placed by a move: conversation, placement, imported from.
    static let placement = u32 + u8 + u32
    /// A sender's frozen replay windows: sender, the count of its windows.
    static let frozenWindows = u32 + count
    /// A source's replay window: source id, highest sequence, the count of its words.
    static let replayWindow = count + u64 + count
    /// One word of a replay window's bits.
    static let replayWindowWord = u64
    /// One byte of a string or byte list.
    static let byte = u8
    /// One value of a `UInt32` list.
    static let uint32 = u32
}
