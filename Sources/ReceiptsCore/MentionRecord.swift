/// A message's mention of one of its recipients by name (8 bytes): kept in the conversation's
/// `mentions`, in sequence order, only for the users a mention can count for.
struct MentionRecord: Sendable, Hashable {
    /// The message's sequence.
    var sequence: UInt32
    /// The mentioned recipient's member slot.
    var member: UInt32
}
