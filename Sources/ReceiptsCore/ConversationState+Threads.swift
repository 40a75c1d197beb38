/// Threads (`ThreadState`): replies in the conversation's timeline, read in their thread.
extension ConversationState {
    /// The thread of retained message `s` if it is a reply, or nil for a main-timeline message
    /// (a look at its flags: the hot path of every receipt asks).
    @inline(__always)
    func threadIndex(ofReply s: UInt32) -> Int? {
        guard messages[Int(s - base)].flags & MessageRecord.Flag.threadReply != 0 else { return nil }
        return threadOfReply[s].map(Int.init)
    }

    /// The index of the thread of root `root` (a main-timeline message), made if it has none.
    mutating func threadIndex(creatingFor root: UInt32, rootID: String) -> Int {
        if let index = threadOfRoot[root] { return Int(index) }
        threads.append(ThreadState(rootID: rootID, root: root))
        threadOfRoot[root] = UInt32(threads.count - 1)
        return threads.count - 1
    }

    /// The index of `slot`'s record in thread `t`, made (and indexed by slot) if the thread
    /// holds none.
    mutating func threadMember(_ t: Int, creating slot: UInt32) -> Int {
        if let index = threads[t].memberIndex[slot] { return Int(index) }
        threadsOfSlot[slot, default: []].append(UInt32(t))
        return threads[t].memberIndex(creating: slot)
    }

    /// Makes `slot` follow thread `t`; whether it did not before.
    mutating func follow(_ t: Int, slot: UInt32) -> Bool {
        let index = threadMember(t, creating: slot)
        guard !threads[t].members[index].follows else { return false }
        threads[t].members[index].flags |= ThreadMember.Flag.follows
        return true
    }

    /// Records reply `s` (just appended with `isReply`, by `sender`) in thread `t`: the sender
    /// follows the thread, and with its first reply so does the root's sender, while a member.
    /// - Returns: The followers whose thread state changed: those still members but the sender.
    mutating func addReply(_ s: UInt32, toThread t: Int, sender: UInt32) -> [UInt32] {
        threads[t].replies.append(s)
        threadOfReply[s] = UInt32(t)
        _ = follow(t, slot: sender)
        if threads[t].replies.count == 1, let p = position(ofSequence: threads[t].root) {
            let rootSender = messages[p].sender
            if members[Int(rootSender)].isMember, messages[p].flags & MessageRecord.Flag.system == 0 {
                _ = follow(t, slot: rootSender)
            }
        }
        return followers(of: t).filter { $0 != sender }
    }

    /// The members of the conversation who follow thread `t`.
    func followers(of t: Int) -> [UInt32] {
        threads[t].members.compactMap { $0.follows && members[Int($0.slot)].isMember ? $0.slot : nil }
    }

    /// Moves a current member's watermarks in thread `t` up to reply `target` (merge by maximum)
    /// and updates the counts of the replies newly covered in their current membership; the
    /// main timeline's watermarks do not move.
    ///
    /// - Parameters:
    ///   - slot: A current member, a recipient of `target` in this membership.
    ///   - visible: The user shares reads: a read also moves the visible watermark.
    ///   - changes: Receives the sequences whose status changed.
    /// - Returns: Whether the member's own read watermark in the thread moved.
    @discardableResult
    mutating func advanceInThread(
        _ t: Int,
        slot: UInt32,
        to target: UInt32,
        isRead: Bool,
        visible: Bool,
        time: Int64,
        changes: inout ChangeSet
    ) -> Bool {
        let index = threadMember(t, creating: slot)
        var own = threads[t].members[index]
        let old = own
        if target > own.deliveredUpTo {
            own.deliveredUpTo = target
            advances.append(ReceiptAdvance(upTo: target, previous: own.deliveredHead, time: time))
            own.deliveredHead = UInt32(advances.count)
        }
        if isRead {
            own.readUpTo = max(own.readUpTo, target)
            if visible && target > own.visibleReadUpTo {
                own.visibleReadUpTo = target
                advances.append(ReceiptAdvance(upTo: target, previous: own.visibleHead, time: time))
                own.visibleHead = UInt32(advances.count)
            }
        }
        threads[t].members[index] = own
        let floor = max(members[Int(slot)].joinedAfter, base &- 1)
        let deliveredFrom = max(old.deliveredUpTo, floor)
        let visibleFrom = max(old.visibleReadUpTo, floor)
        let replies = threads[t].replies
        var r = threads[t].firstReply(after: min(deliveredFrom, visibleFrom))
        while r < replies.count, replies[r] <= target {
            addReceipts(
                on: replies[r],
                of: slot,
                skipping: 0,
                delivered: (deliveredFrom, own.deliveredUpTo),
                read: (visibleFrom, own.visibleReadUpTo),
                time: time,
                changes: &changes
            )
            r += 1
        }
        return own.readUpTo != old.readUpTo
    }

    /// Moves a rejoined member's own read watermark in thread `t` up to `target`, a reply from
    /// before their latest join: their badge clears, no receipt is added (as `advanceOwnRead`).
    /// - Returns: Whether it moved.
    mutating func advanceOwnReadInThread(_ t: Int, slot: UInt32, to target: UInt32) -> Bool {
        let index = threadMember(t, creating: slot)
        guard target > threads[t].members[index].readUpTo else { return false }
        threads[t].members[index].readUpTo = target
        return true
    }

    /// The threads' part of a membership's end (`leave`): the member's thread watermarks are
    /// kept for the replies of this membership, and on the replies they had not visibly read they
    /// stop counting.
    mutating func leaveThreads(slot: UInt32, joinedAfter: UInt32, time: Int64, changes: inout ChangeSet) {
        for t in threads.indices {
            let own = threads[t].member(slot)
            // A membership with no message has no reply to judge: its frozen watermarks would
            // share their `leftAfter` with the membership before it.
            if let index = threads[t].memberIndex[slot], let own, joinedAfter < lastSequence {
                threads[t].members[Int(index)].frozen.append(
                    FrozenThreadWatermarks(
                        leftAfter: lastSequence,
                        deliveredUpTo: own.deliveredUpTo,
                        visibleReadUpTo: own.visibleReadUpTo
                    )
                )
            }
            let delivered = own?.deliveredUpTo ?? 0
            let replies = threads[t].replies
            for r in threads[t].firstReply(
                after: max(joinedAfter, own?.visibleReadUpTo ?? 0, base &- 1)
            )..<replies.count {
                let s = replies[r]
                let p = Int(s - base)
                var message = messages[p]
                guard message.counts(member: slot) else { continue }
                if message.counted > 0 { message.counted -= 1 }
                if delivered >= s && message.deliveredCount > 0 { message.deliveredCount -= 1 }
                refresh(&message, position: p, time: max(time, sentAt(of: message, position: p)))
                messages[p] = message
                changes.add(s)
            }
        }
    }

    /// The heads of the receipt-advance chains that time `slot`'s receipts of message `s`: the
    /// member's own, or for a reply its thread record's.
    func receiptHeads(of slot: UInt32, at s: UInt32) -> (delivered: UInt32, visible: UInt32) {
        if let t = threadIndex(ofReply: s) {
            let own = threads[t].member(slot)
            return (own?.deliveredHead ?? 0, own?.visibleHead ?? 0)
        }
        return (members[Int(slot)].deliveredHead, members[Int(slot)].visibleHead)
    }

    /// What a member has not read in thread `t`: its replies from others, not system, not
    /// deleted, of which the member is a recipient (in any membership), after their read
    /// watermark there, and how many of those mention them, by name or as everyone. It stops
    /// counting at `limit` replies.
    func unreadInThread(_ t: Int, slot: UInt32, limit: Int = .max) -> (replies: Int, mentions: Int) {
        let readUpTo = threads[t].member(slot)?.readUpTo ?? 0
        let replies = threads[t].replies
        var count = 0
        var mentioned = 0
        for r in threads[t].firstReply(after: max(readUpTo, base &- 1))..<replies.count {
            if count == limit { break }
            let s = replies[r]
            let message = messages[Int(s - base)]
            guard message.flags & (MessageRecord.Flag.system | MessageRecord.Flag.deleted) == 0 else { continue }
            if case .none = standing(of: slot, at: s, sender: message.sender) { continue }
            count += 1
            if message.flags & MessageRecord.Flag.mentionsEveryone != 0 || names(slot, in: s) { mentioned += 1 }
        }
        return (count, mentioned)
    }

    /// How many threads `slot` follows that have replies it has not read (only the threads that
    /// hold it are looked at).
    func unreadThreads(slot: UInt32) -> Int {
        (threadsOfSlot[slot] ?? []).count { t in
            threads[Int(t)].member(slot)?.follows == true && unreadInThread(Int(t), slot: slot, limit: 1).replies > 0
        }
    }

    /// Retention's part for threads (`expire`, after `base` moved): replies before `base` leave
    /// their threads, a thread whose root and replies all expired goes, and frozen watermarks of
    /// memberships that ended before `base` go; the indexes are rebuilt.
    mutating func expireThreads() {
        threads = threads.compactMap { thread in
            var thread = thread
            thread.replies.removeFirst(thread.firstReply(after: base - 1))
            guard thread.root >= base || !thread.replies.isEmpty else { return nil }
            for i in thread.members.indices {
                thread.members[i].frozen.removeAll { $0.leftAfter < base }
            }
            return thread
        }
        rebuildThreadIndexes()
    }

    /// Rebuilds `threadOfRoot`, `threadOfReply` and `threadsOfSlot` from `threads`.
    mutating func rebuildThreadIndexes() {
        threadOfRoot = [:]
        threadOfReply = [:]
        threadsOfSlot = [:]
        for (t, thread) in threads.enumerated() {
            threadOfRoot[thread.root] = UInt32(t)
            for s in thread.replies { threadOfReply[s] = UInt32(t) }
            for member in thread.members { threadsOfSlot[member.slot, default: []].append(UInt32(t)) }
        }
    }
}
