/// One (conversation, member) slot: the member's watermarks and membership (36 bytes).
///
/// Watermarks are message sequence numbers and only move forward. Per-message receipt times
/// are not stored here: each advance is appended to the conversation's `ReceiptAdvance` log,
/// chained per member, and a message's time is the first advance covering it.
struct MemberRecord: Sendable, Hashable {
    /// The user's index in the engine's user table (low 28 bits) and `flags` (high 4 bits):
    /// packed so the record is 36 bytes, not 40.
    private var userAndFlags: UInt32
    /// While a member: the conversation's last sequence when they (re)joined; they are a
    /// recipient of messages with a greater sequence.
    var joinedAfter: UInt32
    /// Delivered up to this sequence (always >= `readUpTo`).
    var deliveredUpTo: UInt32 = 0
    /// Read up to this sequence, private reads included: drives the user's own unread count.
    var readUpTo: UInt32 = 0
    /// Read up to this sequence while sharing reads: the only reads anyone else may see.
    var visibleReadUpTo: UInt32 = 0
    /// Sequence of the member's latest normal (non-system) message, 0 if none.
    var lastNormalSent: UInt32 = 0
    /// 1 + index of the newest delivered advance in the conversation's log, 0 if none.
    var deliveredHead: UInt32 = 0
    /// 1 + index of the newest visible-read advance in the conversation's log, 0 if none.
    var visibleHead: UInt32 = 0
    /// 1 + index of the conversation in which the same user got their member slot before this
    /// one, 0 if none: the user's conversations are chained through their member slots
    /// (`UserRecord.lastConversation`), without a link array beside them.
    var previousConversation: UInt32 = 0

    /// Users an engine can hold: user indexes share a word with the flags.
    static let userLimit = 1 << 28

    init(
        user: UInt32,
        joinedAfter: UInt32,
        deliveredUpTo: UInt32 = 0,
        readUpTo: UInt32 = 0,
        visibleReadUpTo: UInt32 = 0,
        lastNormalSent: UInt32 = 0,
        deliveredHead: UInt32 = 0,
        visibleHead: UInt32 = 0,
        flags: UInt8
    ) {
        self.userAndFlags = user & 0x0fff_ffff | UInt32(flags & 15) << 28
        self.joinedAfter = joinedAfter
        self.deliveredUpTo = deliveredUpTo
        self.readUpTo = readUpTo
        self.visibleReadUpTo = visibleReadUpTo
        self.lastNormalSent = lastNormalSent
        self.deliveredHead = deliveredHead
        self.visibleHead = visibleHead
    }

    /// The user's index in the engine's user table (set when a move renumbers users).
    @inline(__always)
    var user: UInt32 {
        get { userAndFlags & 0x0fff_ffff }
        set { userAndFlags = userAndFlags & ~0x0fff_ffff | newValue & 0x0fff_ffff }
    }

    /// `MemberRecord.Flag` bits.
    @inline(__always)
    var flags: UInt8 {
        get { UInt8(userAndFlags >> 28) }
        set { userAndFlags = userAndFlags & 0x0fff_ffff | UInt32(newValue & 15) << 28 }
    }

    /// Bits of `flags`.
    enum Flag {
        static let member: UInt8 = 1
        static let markedUnread: UInt8 = 2
        static let hasFormerMemberships: UInt8 = 4
        /// The member shares no reads in this conversation (its `ReceiptPrivacy` of this
        /// conversation), whatever the user's global setting: a read counts as visible only
        /// when both allow it.
        static let readsPrivate: UInt8 = 8
        /// Every flag.
        static let all: UInt8 = 15
    }

    /// Whether the member's reads here may be seen by others, as far as this conversation goes.
    var sharesReadsHere: Bool { flags & Flag.readsPrivate == 0 }

    /// Whether the user is currently a member.
    var isMember: Bool { flags & Flag.member != 0 }

    /// What the member's own read state depends on besides the messages: the read watermark and
    /// the marked-unread flag, compared before and after a read to tell whether it changed.
    @inline(__always)
    var readState: UInt64 { UInt64(readUpTo) << 1 | (flags & Flag.markedUnread != 0 ? 1 : 0) }
}

/// A finished membership of a member slot: the member left (or was deleted) after `leftAfter`.
///
/// The watermarks are frozen at that moment, so a user who rejoins later cannot add receipts
/// to the messages of their earlier membership.
struct FormerMembership: Sendable, Hashable {
    /// The member slot.
    var member: UInt32
    /// Recipient of messages with sequence in `(joinedAfter, leftAfter]`.
    var joinedAfter: UInt32
    /// The conversation's last sequence when they left.
    var leftAfter: UInt32
    /// Delivered watermark when they left.
    var deliveredUpTo: UInt32
    /// Visible-read watermark when they left.
    var visibleReadUpTo: UInt32
    /// The membership ended because the account was deleted, not by leaving.
    var byDeletion: Bool
}

/// One forward move of a member's watermark: it covered messages up to `upTo` at `time`.
struct ReceiptAdvance: Sendable, Hashable {
    /// The new watermark.
    var upTo: UInt32
    /// 1 + index of the same member's previous advance of the same kind, 0 if none.
    var previous: UInt32
    /// When (milliseconds).
    var time: Int64
}
