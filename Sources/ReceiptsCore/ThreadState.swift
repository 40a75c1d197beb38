/// One thread of a conversation: the replies to one root message, and the members the thread
/// holds, with their watermarks in it.
///
/// A reply lives in its conversation's timeline (a sequence, a status, a sheet, recipients: the
/// members when it was sent) but is read in its thread: a read of the main timeline never covers
/// it, and a read in the thread covers nothing else (Matrix MSC3771). A thread holds the members
/// who took part in it (sent its root or a reply), were mentioned in it, follow it, or gave a
/// receipt in it; a member it does not hold has delivered and read none of its replies. So a
/// thread costs memory for those members and its replies, never for every member of a group.
struct ThreadState: Sendable, Hashable {
    /// The root message's id, kept when the root itself expires.
    var rootID: String
    /// The root message's sequence.
    var root: UInt32
    /// The replies' sequences, ascending.
    var replies: [UInt32] = []
    /// The members the thread holds.
    var members: [ThreadMember] = []
    /// Conversation member slot -> index in `members`.
    var memberIndex: [UInt32: UInt32] = [:]

    /// The thread's record of member slot `slot`, if it holds one.
    func member(_ slot: UInt32) -> ThreadMember? {
        memberIndex[slot].map { members[Int($0)] }
    }

    /// The index in `members` of `slot`'s record, made if the thread holds none (through
    /// `ConversationState.threadMember(_:creating:)`, which indexes it by slot).
    mutating func memberIndex(creating slot: UInt32) -> Int {
        if let index = memberIndex[slot] { return Int(index) }
        members.append(ThreadMember(slot: slot))
        memberIndex[slot] = UInt32(members.count - 1)
        return members.count - 1
    }

    /// The index in `replies` of the first reply after sequence `after`.
    func firstReply(after: UInt32) -> Int {
        var low = 0
        var high = replies.count
        while low < high {
            let middle = (low + high) / 2
            if replies[middle] <= after { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

/// A member's place in a thread: watermarks (sequences of the conversation, under which only the
/// thread's replies count), the heads of its receipt-advance chains in the conversation's
/// `advances`, whether it follows the thread, and what its watermarks were when a membership of
/// the member ended.
struct ThreadMember: Sendable, Hashable {
    /// The conversation member slot.
    var slot: UInt32
    /// Delivered up to this reply (a read delivers too).
    var deliveredUpTo: UInt32 = 0
    /// Read up to this reply, private reads included: the member's own unread count in the thread.
    var readUpTo: UInt32 = 0
    /// Read up to this reply while sharing reads: the only reads anyone else may see.
    var visibleReadUpTo: UInt32 = 0
    /// 1 + index of the newest delivered advance in the conversation's log, 0 if none.
    var deliveredHead: UInt32 = 0
    /// 1 + index of the newest visible-read advance in the conversation's log, 0 if none.
    var visibleHead: UInt32 = 0
    /// `ThreadMember.Flag` bits.
    var flags: UInt8 = 0
    /// The watermarks when each membership of the member ended, while the thread held it: a reply
    /// of that membership is judged by them, as `FormerMembership` judges the main timeline.
    var frozen: [FrozenThreadWatermarks] = []

    /// Bits of `flags`.
    enum Flag {
        /// The member follows the thread: sent its root or a reply, was mentioned in a reply, or
        /// followed it; `ThreadFollowed` with `follow` false clears it.
        static let follows: UInt8 = 1
        /// Every flag.
        static let all: UInt8 = 1
    }

    /// Whether the member follows the thread.
    var follows: Bool { flags & Flag.follows != 0 }
}

/// A thread member's watermarks when a membership ended after sequence `leftAfter`.
struct FrozenThreadWatermarks: Sendable, Hashable {
    var leftAfter: UInt32
    var deliveredUpTo: UInt32
    var visibleReadUpTo: UInt32
}
