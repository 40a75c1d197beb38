/// One conversation's whole state: messages in flat arrays indexed by sequence, members with
/// their watermarks, and the log of watermark advances.
///
/// Memory is O(messages + members + advances), never messages × members (SPEC §8). Message
/// sequences are `UInt32` inside (4 billion per conversation) and `UInt64` on the API.
struct ConversationState: Sendable {
    /// The conversation id.
    var id: String
    /// Retained messages: `messages[s - base]` is sequence `s`.
    var messages: [MessageRecord] = []
    /// Their ids, same positions.
    var messageIDs = IDTable()
    /// The id of the last message as it was sent (the event's string; nil after a restore):
    /// most receipts name the latest message, and its status shares this string instead of
    /// decoding a new one from `messageIDs` (an allocation for every id over 15 bytes, and a
    /// free when the status is dropped).
    var lastMessageID: String?
    /// Member slots, current and former, in first-join order.
    var members: [MemberRecord] = []
    /// User index -> member slot.
    var memberIndex = MemberIndex()
    /// Watermark advances of every member, chained per member and kind.
    var advances: [ReceiptAdvance] = []
    /// Finished memberships (rare: only members who left or were deleted).
    var formerMemberships: [FormerMembership] = []
    /// Named mentions of recipients, by sequence then member slot: a mention costs 8 bytes for
    /// the user it names, nothing for the other members.
    var mentions: [MentionRecord] = []
    /// The conversation's threads, in the order their first reply or follower made them.
    var threads: [ThreadState] = []
    /// Root sequence -> index in `threads`.
    var threadOfRoot: [UInt32: UInt32] = [:]
    /// Reply sequence -> index in `threads`.
    var threadOfReply: [UInt32: UInt32] = [:]
    /// Member slot -> the threads that hold it: a member's read state looks at those only.
    var threadsOfSlot: [UInt32: [UInt32]] = [:]
    /// Times that do not fit a message record, by `farKey` (rare: a receipt 49.7 days after
    /// sending, a send time outside ±4,400 years).
    var farTimes: [UInt64: Int64] = [:]
    /// Sequence of `messages[0]`; `lastSequence + 1` when nothing is retained.
    var base: UInt32 = 1
    /// The last assigned sequence (0 before the first message).
    var lastSequence: UInt32 = 0
    /// The highest sequence a message may have: one below `UInt32.max`, so that `base`, which
    /// passes `lastSequence` by one once every message has expired, always fits.
    static let sequenceLimit = UInt32.max - 1
    /// How many slots are current members.
    var memberCount: UInt32 = 0
    /// Direct or group; never changes.
    var kind: ConversationKind
    /// Served here, frozen for a move, or released to another worker.
    var placement = Placement.owned
    /// The worker this conversation was imported from in a move, or -1: events for it are
    /// also checked against that worker's replay windows, frozen at export.
    var importedFrom: Int32 = -1

    init(id: String, kind: ConversationKind) {
        self.id = id
        self.kind = kind
    }

    // MARK: - Messages

    /// Position in `messages` of sequence `s`, or nil if not retained.
    @inline(__always)
    func position(ofSequence s: UInt32) -> Int? {
        s >= base && s <= lastSequence ? Int(s - base) : nil
    }

    /// Sequence of the message with this id, or nil.
    func sequence(ofMessage id: String) -> UInt32? {
        messageIDs.position(of: id).map { base + UInt32($0) }
    }

    /// The `farTimes` key of a message's delivered-to-all time (`kind` 0), first-read time (1)
    /// or send time (2).
    @inline(__always)
    static func farKey(_ sequence: UInt32, _ kind: UInt64) -> UInt64 {
        UInt64(sequence) << 2 | kind
    }

    /// The send time of the message at position `p`.
    @inline(__always)
    func sentAt(position p: Int) -> Int64 {
        let stored = messages[p].storedSentAt
        guard stored == MessageRecord.farSentAt else { return stored }
        return farTimes[Self.farKey(base + UInt32(p), 2)] ?? stored
    }

    /// Appends a message sent now by a current member; returns its sequence.
    ///
    /// - Parameters:
    ///   - mentionsEveryone: Whether it mentions every member (ignored for a system message);
    ///     named mentions are added after it (`addMentions`).
    ///   - isReply: A thread reply (`addReply` records it in its thread): the sender's latest
    ///   main-timeline message, the one `lastSent` shows, stays what it was.
    mutating func appendMessage(
        id: String,
        sender: UInt32,
        isSystem: Bool,
        mentionsEveryone: Bool = false,
        isReply: Bool = false,
        sentAt: Int64
    ) -> UInt32 {
        let recipients = isSystem ? 0 : memberCount - 1
        let record = MessageRecord(
            sentAt: sentAt,
            sender: sender,
            counted: recipients,
            flags: (isSystem ? MessageRecord.Flag.system : 0)
                | (recipients == 0 ? 0 : MessageRecord.Flag.hasRecipients)
                | (mentionsEveryone && !isSystem ? MessageRecord.Flag.mentionsEveryone : 0)
                | (isReply ? MessageRecord.Flag.threadReply : 0),
            status: recipients == 0 ? ReceiptStatus.none.rawValue : ReceiptStatus.notDelivered.rawValue
        )
        if messages.isEmpty { base = lastSequence + 1 }
        lastSequence += 1
        messages.reserveGently(1)
        messages.append(record)
        if !MessageRecord.fitsInline(sentAt) { farTimes[Self.farKey(lastSequence, 2)] = sentAt }
        messageIDs.append(id)
        lastMessageID = id
        if !isSystem && !isReply { members[Int(sender)].lastNormalSent = lastSequence }
        return lastSequence
    }

    /// Recomputes the status of `message` (the record at position `p`, being updated by the
    /// caller) from its counts after they changed at `time`, and records its delivered-to-all
    /// and first-read times when they are reached.
    ///
    /// With no counted recipients left (all left or were deleted without reading) the status
    /// stays what it was: "Delivered" to nobody would be a lie, and nobody read it.
    @inline(__always)
    mutating func refresh(_ message: inout MessageRecord, position p: Int, time: Int64) {
        guard message.flags & MessageRecord.Flag.hasRecipients != 0, message.counted != 0 else { return }
        let computed: ReceiptStatus
        if kind == .direct {
            computed =
                message.readCount > 0
                ? .read : message.deliveredCount >= message.counted ? .delivered : .notDelivered
        } else if message.readCount >= message.counted {
            computed = .readByAll
        } else if message.readCount > 0 {
            computed = .readBySome
        } else {
            computed = message.deliveredCount >= message.counted ? .delivered : .notDelivered
        }
        message.status = max(message.status, computed.rawValue)
        if message.deliveredCount >= message.counted && message.deliveredOffset == MessageRecord.noTime {
            message.deliveredOffset = offset(of: time, after: message, position: p, isRead: false)
        }
        if message.readCount > 0 && message.readOffset == MessageRecord.noTime {
            message.readOffset = offset(of: time, after: message, position: p, isRead: true)
        }
    }

    /// The send time of `message`, the record at position `p`.
    @inline(__always)
    func sentAt(of message: MessageRecord, position p: Int) -> Int64 {
        message.storedSentAt == MessageRecord.farSentAt ? sentAt(position: p) : message.storedSentAt
    }

    /// The offset that encodes a delivered-to-all (`isRead` false) or first-read `time` of
    /// `message` (at position `p`): milliseconds after sending, or `farTime` with the time
    /// (never before sending) kept in `farTimes`.
    @inline(__always)
    mutating func offset(of time: Int64, after message: MessageRecord, position p: Int, isRead: Bool) -> UInt32 {
        let sent = sentAt(of: message, position: p)
        let (delta, overflow) = time.subtractingReportingOverflow(sent)
        if !overflow && delta >= 0 && delta < Int64(MessageRecord.farTime) { return UInt32(delta) }
        farTimes[Self.farKey(base + UInt32(p), isRead ? 1 : 0)] = max(time, sent)
        return MessageRecord.farTime
    }

    /// The message's delivered-to-all (`isRead` false) or first-read time, if any.
    func time(position p: Int, isRead: Bool) -> Int64? {
        let message = messages[p]
        return Self.time(
            offset: isRead ? message.readOffset : message.deliveredOffset,
            sent: sentAt(position: p),
            sequence: base + UInt32(p),
            isRead: isRead,
            farTimes: farTimes
        )
    }

    /// Decodes a stored time: none, far (kept in `farTimes` under the message's sequence), or
    /// an offset from when the message was sent. The one decoding, for the live statuses and
    /// the snapshots alike.
    @inline(__always)
    static func time(
        offset: UInt32,
        sent: Int64,
        sequence: UInt32,
        isRead: Bool,
        farTimes: [UInt64: Int64]
    ) -> Int64? {
        switch offset {
        case MessageRecord.noTime: nil
        case MessageRecord.farTime: farTimes[farKey(sequence, isRead ? 1 : 0)]
        default: sent + Int64(offset)
        }
    }

    /// Records a message's delivered-to-all or first-read time (never before it was sent).
    mutating func setTime(_ time: Int64, position p: Int, isRead: Bool) {
        let offset = offset(of: time, after: messages[p], position: p, isRead: isRead)
        if isRead { messages[p].readOffset = offset } else { messages[p].deliveredOffset = offset }
    }

    // MARK: - Membership

    /// The member slot of a user, current or former.
    @inline(__always)
    func slot(of user: UInt32) -> UInt32? { memberIndex.find(user, in: members) }

    /// Makes the user a current member (no-op if they are); returns their slot.
    mutating func join(user: UInt32) -> UInt32 {
        if let slot = slot(of: user) {
            if !members[Int(slot)].isMember {
                members[Int(slot)].joinedAfter = lastSequence
                members[Int(slot)].flags |= MemberRecord.Flag.member
                memberCount += 1
            }
            return slot
        }
        let slot = UInt32(members.count)
        members.append(MemberRecord(user: user, joinedAfter: lastSequence, flags: MemberRecord.Flag.member))
        memberIndex.didAppend(to: members)
        memberCount += 1
        return slot
    }

    /// Ends the current membership of `slot`: its watermarks freeze for the messages it
    /// received, and on messages it had not visibly read it stops counting, which may complete
    /// them ("Read by all users" once the last non-reader leaves).
    mutating func leave(slot: UInt32, byDeletion: Bool, time: Int64, changes: inout ChangeSet) {
        var member = members[Int(slot)]
        guard member.isMember else { return }
        formerMemberships.append(
            FormerMembership(
                member: slot,
                joinedAfter: member.joinedAfter,
                leftAfter: lastSequence,
                deliveredUpTo: member.deliveredUpTo,
                visibleReadUpTo: member.visibleReadUpTo,
                byDeletion: byDeletion
            )
        )
        let from = max(member.joinedAfter, member.visibleReadUpTo, base &- 1)
        if from < lastSequence {
            for s in (from + 1)...lastSequence {
                let p = Int(s - base)
                var message = messages[p]
                guard message.counts(member: slot), message.flags & MessageRecord.Flag.threadReply == 0 else {
                    continue
                }
                // Guarded so that even inconsistent restored counts cannot trap.
                if message.counted > 0 { message.counted -= 1 }
                if member.deliveredUpTo >= s && message.deliveredCount > 0 { message.deliveredCount -= 1 }
                refresh(&message, position: p, time: max(time, sentAt(of: message, position: p)))
                messages[p] = message
                changes.add(s)
            }
        }
        if !threads.isEmpty { leaveThreads(slot: slot, joinedAfter: member.joinedAfter, time: time, changes: &changes) }
        member.flags &= ~MemberRecord.Flag.member
        member.flags |= MemberRecord.Flag.hasFormerMemberships
        members[Int(slot)] = member
        memberCount -= 1
    }

    /// How `slot` stood towards message `s`.
    enum Standing {
        /// Not a recipient: not a member when it was sent, or its sender.
        case none
        /// A recipient and still a member: the live watermarks apply.
        case current(deliveredUpTo: UInt32, visibleReadUpTo: UInt32)
        /// A recipient whose membership since ended: the frozen watermarks apply.
        case former(deliveredUpTo: UInt32, visibleReadUpTo: UInt32, byDeletion: Bool)

        /// A recipient in their current membership.
        var isCurrent: Bool {
            if case .current = self { return true }
            return false
        }
    }

    /// Whether `slot` received retained message `s` (sent by `sender`), and which watermarks
    /// apply. For a thread reply the watermarks are the member's in its thread.
    ///
    /// Inline for the common case, a current member and a main-timeline message: called out of
    /// line on a conversation read through the engine's buffer, the whole conversation was
    /// copied for the call (a retain of each of its arrays, on every receipt).
    @inline(__always)
    func standing(of slot: UInt32, at s: UInt32, sender: UInt32) -> Standing {
        guard slot != sender else { return .none }
        let member = members[Int(slot)]
        if member.isMember && member.joinedAfter < s
            && messages[Int(s - base)].flags & MessageRecord.Flag.threadReply == 0
        {
            return .current(deliveredUpTo: member.deliveredUpTo, visibleReadUpTo: member.visibleReadUpTo)
        }
        return standing(of: slot, at: s, member: member)
    }

    /// `standing(of:at:sender:)` for a thread reply, or a member who is not a current recipient.
    private func standing(of slot: UInt32, at s: UInt32, member: MemberRecord) -> Standing {
        let thread = threadIndex(ofReply: s).map { threads[$0] }
        if member.isMember && member.joinedAfter < s {
            guard let thread else {
                return .current(deliveredUpTo: member.deliveredUpTo, visibleReadUpTo: member.visibleReadUpTo)
            }
            let own = thread.member(slot)
            return .current(deliveredUpTo: own?.deliveredUpTo ?? 0, visibleReadUpTo: own?.visibleReadUpTo ?? 0)
        }
        guard member.flags & MemberRecord.Flag.hasFormerMemberships != 0 else { return .none }
        for former in formerMemberships
        where former.member == slot && former.joinedAfter < s && s <= former.leftAfter {
            guard let thread else {
                return .former(
                    deliveredUpTo: former.deliveredUpTo,
                    visibleReadUpTo: former.visibleReadUpTo,
                    byDeletion: former.byDeletion
                )
            }
            let frozen = thread.member(slot)?.frozen.first { $0.leftAfter == former.leftAfter }
            return .former(
                deliveredUpTo: frozen?.deliveredUpTo ?? 0,
                visibleReadUpTo: frozen?.visibleReadUpTo ?? 0,
                byDeletion: former.byDeletion
            )
        }
        return .none
    }

    // MARK: - Receipts

    /// Moves a current member's watermarks up to `target` (merge by maximum) and updates the
    /// counts of the messages newly covered in their current membership.
    ///
    /// - Parameters:
    ///   - slot: A current member.
    ///   - target: The sequence the receipt covers up to.
    ///   - isRead: A read (also a delivery) rather than a delivery.
    ///   - visible: The user shares reads: a read also moves the visible watermark.
    ///   - time: The receipt's time.
    ///   - changes: Receives the sequences whose status changed (its `conversation` is this one).
    /// - Returns: Whether any watermark moved.
    @discardableResult
    mutating func advance(
        slot: UInt32,
        to target: UInt32,
        isRead: Bool,
        visible: Bool,
        time: Int64,
        changes: inout ChangeSet
    ) -> Bool {
        var member = members[Int(slot)]
        let floor = max(member.joinedAfter, base &- 1)
        let oldDelivered = member.deliveredUpTo
        let oldVisible = member.visibleReadUpTo
        var moved = false
        if target > member.deliveredUpTo {
            member.deliveredUpTo = target
            advances.append(ReceiptAdvance(upTo: target, previous: member.deliveredHead, time: time))
            member.deliveredHead = UInt32(advances.count)
            moved = true
        }
        if isRead {
            if target > member.readUpTo {
                member.readUpTo = target
                moved = true
            }
            if visible && target > member.visibleReadUpTo {
                member.visibleReadUpTo = target
                advances.append(ReceiptAdvance(upTo: target, previous: member.visibleHead, time: time))
                member.visibleHead = UInt32(advances.count)
                moved = true
            }
            member.flags &= ~MemberRecord.Flag.markedUnread
        }
        members[Int(slot)] = member
        let deliveredFrom = max(oldDelivered, floor)
        let visibleFrom = max(oldVisible, floor)
        let from = min(deliveredFrom, visibleFrom)
        let to = min(max(member.deliveredUpTo, member.visibleReadUpTo), lastSequence)
        guard from < to else { return moved }
        for s in (from + 1)...to {
            addReceipts(
                on: s,
                of: slot,
                skipping: MessageRecord.Flag.threadReply,
                delivered: (deliveredFrom, member.deliveredUpTo),
                read: (visibleFrom, member.visibleReadUpTo),
                time: time,
                changes: &changes
            )
        }
        return moved
    }

    /// Adds the receipts of `slot` on message `s` that its watermarks newly cover (a delivery
    /// when `s` is in `delivered`, a visible read when in `read`, each after `after` up to
    /// `upTo`) and refreshes its status; nothing if the member is no recipient of it or it has
    /// a flag of `skipped`.
    @inline(__always)
    mutating func addReceipts(
        on s: UInt32,
        of slot: UInt32,
        skipping skipped: UInt8,
        delivered: (after: UInt32, upTo: UInt32),
        read: (after: UInt32, upTo: UInt32),
        time: Int64,
        changes: inout ChangeSet
    ) {
        let p = Int(s - base)
        var message = messages[p]
        guard message.counts(member: slot), message.flags & skipped == 0 else { return }
        let delivers = s > delivered.after && s <= delivered.upTo
        let reads = s > read.after && s <= read.upTo
        guard delivers || reads else { return }
        if delivers { message.deliveredCount += 1 }
        if reads { message.readCount += 1 }
        refresh(&message, position: p, time: max(time, sentAt(of: message, position: p)))
        messages[p] = message
        changes.add(s)
    }

    /// Whether `slot` is a current member who was a member before: they left (or were removed)
    /// and joined again.
    func isRejoined(_ slot: UInt32) -> Bool {
        let member = members[Int(slot)]
        return member.isMember && member.flags & MemberRecord.Flag.hasFormerMemberships != 0
    }

    /// Moves a rejoined member's own read watermark up to `target`, a message from before their
    /// latest join. It adds no receipt: what others see of a message of an earlier membership
    /// froze when they left, and they were no recipient of one sent while they were away. It
    /// clears what it covers of their unread count, and the marked-unread flag, as any read does.
    mutating func advanceOwnRead(slot: UInt32, to target: UInt32) {
        if target > members[Int(slot)].readUpTo { members[Int(slot)].readUpTo = target }
        members[Int(slot)].flags &= ~MemberRecord.Flag.markedUnread
    }

    /// Time of the first advance in the chain starting at `head` that covers `s`.
    func firstCovering(_ s: UInt32, head: UInt32) -> Int64? {
        var index = head
        var found: Int64?
        while index != 0 {
            let advance = advances[Int(index) - 1]
            if advance.upTo < s { break }
            found = advance.time
            index = advance.previous
        }
        return found
    }

    /// What a member has not read in the main timeline: the messages from others, not system,
    /// not deleted, not thread replies, of which the member is a recipient, after their read
    /// watermark (private reads count: this is the user's own view), and how many of those
    /// mention them, by name or as everyone.
    func unread(slot: UInt32) -> (messages: Int, mentions: Int) {
        let member = members[Int(slot)]
        // Counted range by range, without collecting them: this runs for every published read state.
        func unread(after: UInt32, upTo: UInt32) -> (messages: Int, everyone: Int) {
            let from = max(after, member.readUpTo, base &- 1)
            guard from < upTo else { return (0, 0) }
            var count = 0
            var everyone = 0
            for s in (from + 1)...upTo {
                let message = messages[Int(s - base)]
                if message.sender != slot
                    && message.flags
                        & (MessageRecord.Flag.system | MessageRecord.Flag.deleted | MessageRecord.Flag.threadReply) == 0
                {
                    count += 1
                    if message.flags & MessageRecord.Flag.mentionsEveryone != 0 { everyone += 1 }
                }
            }
            return (count, everyone)
        }
        var total = member.isMember ? unread(after: member.joinedAfter, upTo: lastSequence) : (messages: 0, everyone: 0)
        if member.flags & MemberRecord.Flag.hasFormerMemberships != 0 {
            for former in formerMemberships where former.member == slot {
                let counted = unread(after: former.joinedAfter, upTo: former.leftAfter)
                total = (total.messages + counted.messages, total.everyone + counted.everyone)
            }
        }
        return (total.messages, total.everyone + namedMentions(of: slot, after: max(member.readUpTo, base &- 1)))
    }

    /// The named mentions of `slot` after sequence `after` in the main timeline, of messages not
    /// deleted and not mentioning everyone (those are counted once, as everyone's). A mention is
    /// recorded only for a recipient, so it lies within one of the member's memberships.
    func namedMentions(of slot: UInt32, after: UInt32) -> Int {
        var count = 0
        let skipped = MessageRecord.Flag.deleted | MessageRecord.Flag.mentionsEveryone | MessageRecord.Flag.threadReply
        for index in firstMention(after: after)..<mentions.count where mentions[index].member == slot {
            if messages[Int(mentions[index].sequence - base)].flags & skipped == 0 { count += 1 }
        }
        return count
    }

    /// Whether message `s` names `slot` (binary search in `mentions`).
    func names(_ slot: UInt32, in s: UInt32) -> Bool {
        var index = firstMention(after: s - 1)
        while index < mentions.count, mentions[index].sequence == s {
            if mentions[index].member == slot { return true }
            index += 1
        }
        return false
    }

    /// The index of the first mention of a message after sequence `after`.
    func firstMention(after: UInt32) -> Int {
        var low = 0
        var high = mentions.count
        while low < high {
            let middle = (low + high) / 2
            if mentions[middle].sequence <= after { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The member slots message `s` names.
    func mentioned(in s: UInt32) -> [UInt32] {
        var slots: [UInt32] = []
        var index = firstMention(after: s - 1)
        while index < mentions.count, mentions[index].sequence == s {
            slots.append(mentions[index].member)
            index += 1
        }
        return slots
    }

    // MARK: - Retention

    /// Drops the longest prefix of messages sent before `cutoff`; returns how many.
    ///
    /// Watermarks are sequences, so they stay valid; advances that cover only dropped messages
    /// are removed and the per-member chains relinked.
    mutating func expire(sentBefore cutoff: Int64) -> Int {
        var k = 0
        while k < messages.count && sentAt(position: k) < cutoff { k += 1 }
        guard k > 0 else { return 0 }
        messages.removeFirst(k)
        messageIDs.removeFirst(k)
        if messages.isEmpty { lastMessageID = nil }
        base += UInt32(k)
        formerMemberships.removeAll { $0.leftAfter < base }
        mentions.removeFirst(firstMention(after: base - 1))
        if !threads.isEmpty { expireThreads() }
        if !farTimes.isEmpty { farTimes = farTimes.filter { $0.key >> 2 >= UInt64(base) } }
        var remap = [UInt32](repeating: 0, count: advances.count + 1)
        var kept: [ReceiptAdvance] = []
        kept.reserveCapacity(advances.count)
        for (i, advance) in advances.enumerated() where advance.upTo >= base {
            var moved = advance
            moved.previous = remap[Int(advance.previous)]
            kept.append(moved)
            remap[i + 1] = UInt32(kept.count)
        }
        advances = kept
        messages = messages.withUnsafeBufferPointer { Array($0) }
        for t in threads.indices {
            for i in threads[t].members.indices {
                threads[t].members[i].deliveredHead = remap[Int(threads[t].members[i].deliveredHead)]
                threads[t].members[i].visibleHead = remap[Int(threads[t].members[i].visibleHead)]
            }
        }
        for i in members.indices {
            members[i].deliveredHead = remap[Int(members[i].deliveredHead)]
            members[i].visibleHead = remap[Int(members[i].visibleHead)]
            if members[i].flags & MemberRecord.Flag.hasFormerMemberships != 0
                && !formerMemberships.contains(where: { $0.member == UInt32(i) })
            {
                members[i].flags &= ~MemberRecord.Flag.hasFormerMemberships
            }
        }
        return k
    }
}
