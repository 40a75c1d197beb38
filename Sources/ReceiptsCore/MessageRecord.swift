/// One retained message, stored flat (32 bytes) in its conversation's array, indexed by sequence.
///
/// Nothing here grows with the number of recipients: who has it delivered or read is derived
/// from the members' watermarks, and the counts are kept incrementally over advanced ranges.
/// `sentAt` is kept in 48 bits (±4,400 years around 1970); a time outside that range is kept
/// in `ConversationState.farTimes` (see `ConversationState.sentAt(position:)`).
struct MessageRecord: Sendable, Hashable {
    /// Low 32 bits of `storedSentAt`.
    private var sentAtLow: UInt32
    /// High 16 bits (signed) of `storedSentAt`.
    private var sentAtHigh: Int16
    /// `MessageRecord.Flag` bits.
    var flags: UInt8
    /// The highest `ReceiptStatus` raw value ever published: status never goes down.
    var status: UInt8
    /// Milliseconds after `sentAt` at which it became delivered to every counted recipient,
    /// or `MessageRecord.noTime` / `MessageRecord.farTime` (see `ConversationState.time`).
    var deliveredOffset: UInt32 = MessageRecord.noTime
    /// Milliseconds after `sentAt` at which the first recipient visibly read it (same encoding).
    var readOffset: UInt32 = MessageRecord.noTime
    /// The sender's member slot in the conversation.
    var sender: UInt32
    /// Recipients (members at send time minus the sender) minus those who left or were
    /// deleted without having visibly read it.
    var counted: UInt32
    /// Counted recipients that have it delivered (any read counts as delivered).
    var deliveredCount: UInt32 = 0
    /// Counted recipients that visibly read it.
    var readCount: UInt32 = 0

    /// Offset sentinel: no time yet.
    static let noTime = UInt32.max
    /// Offset sentinel: 49.7 days or more after sending; the time is in `ConversationState.farTimes`.
    static let farTime = UInt32.max - 1
    /// `storedSentAt` sentinel: the send time does not fit 48 bits; it is in `ConversationState.farTimes`.
    static let farSentAt: Int64 = -(1 << 47)

    /// Bits of `flags`.
    enum Flag {
        static let system: UInt8 = 1
        static let edited: UInt8 = 2
        static let deleted: UInt8 = 4
        /// The message had at least one recipient when sent (not a system message, not sent
        /// by the only member): receipts count for it.
        static let hasRecipients: UInt8 = 8
        /// The message mentions everyone (`Mentions.everyone`; never on a system message).
        static let mentionsEveryone: UInt8 = 16
        /// The message is a reply in a thread (`ConversationState.threadOfReply` says which):
        /// only reads in that thread cover it.
        static let threadReply: UInt8 = 32
        /// Every bit in use.
        static let all: UInt8 = 63
    }

    /// A record; `sentAt` outside the 48-bit range is stored as `farSentAt`.
    init(
        sentAt: Int64,
        sender: UInt32,
        counted: UInt32,
        deliveredCount: UInt32 = 0,
        readCount: UInt32 = 0,
        flags: UInt8,
        status: UInt8
    ) {
        let stored = Self.fitsInline(sentAt) ? sentAt : Self.farSentAt
        self.sentAtLow = UInt32(truncatingIfNeeded: stored)
        self.sentAtHigh = Int16(truncatingIfNeeded: stored >> 32)
        self.flags = flags
        self.status = status
        self.sender = sender
        self.counted = counted
        self.deliveredCount = deliveredCount
        self.readCount = readCount
    }

    /// Whether a send time is stored inline (`farSentAt` itself is the sentinel, so it is not).
    @inline(__always)
    static func fitsInline(_ sentAt: Int64) -> Bool {
        sentAt > farSentAt && sentAt < 1 << 47
    }

    /// The send time in milliseconds, or `farSentAt`.
    @inline(__always)
    var storedSentAt: Int64 {
        Int64(sentAtHigh) << 32 | Int64(sentAtLow)
    }

    /// Whether a receipt by `member` counts for this message.
    @inline(__always)
    func counts(member: UInt32) -> Bool {
        flags & Flag.hasRecipients != 0 && sender != member
    }
}
