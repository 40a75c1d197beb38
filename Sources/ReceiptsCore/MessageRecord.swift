/// One retained message, stored flat (40 bytes) in its conversation's array, indexed by sequence.
///
/// Nothing here grows with the number of recipients: who has it delivered or read is derived
/// from the members' watermarks, and the counts are kept incrementally over advanced ranges.
struct MessageRecord: Sendable, Hashable {
    /// `sentAt` in milliseconds.
    var sentAt: Int64
    /// Milliseconds after `sentAt` at which it became delivered to every counted recipient,
    /// or `MessageRecord.noTime` / `MessageRecord.farTime` (see `ConversationState.time`).
    var deliveredOffset: UInt32 = MessageRecord.noTime
    /// Milliseconds after `sentAt` at which the first recipient visibly read it (same encoding).
    var readOffset: UInt32 = MessageRecord.noTime
    /// The sender's member slot in the conversation.
    var sender: UInt32
    /// Members at send time minus the sender; 0 for a system message (it has no receipts).
    var recipients: UInt32
    /// Recipients minus those who left or were deleted without having visibly read it.
    var counted: UInt32
    /// Counted recipients that have it delivered (any read counts as delivered).
    var deliveredCount: UInt32 = 0
    /// Counted recipients that visibly read it.
    var readCount: UInt32 = 0
    /// `MessageRecord.Flag` bits.
    var flags: UInt8
    /// The highest `ReceiptStatus` raw value ever published: status never goes down.
    var status: UInt8

    /// Offset sentinel: no time yet.
    static let noTime = UInt32.max
    /// Offset sentinel: 49.7 days or more after sending; the time is in `ConversationState.farTimes`.
    static let farTime = UInt32.max - 1

    /// Bits of `flags`.
    enum Flag {
        static let system: UInt8 = 1
        static let edited: UInt8 = 2
        static let deleted: UInt8 = 4
    }

    /// Whether a receipt by `member` counts for this message.
    @inline(__always)
    func counts(member: UInt32) -> Bool {
        recipients != 0 && sender != member
    }
}
