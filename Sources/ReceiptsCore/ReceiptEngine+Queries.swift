/// Read-only answers. None of them reveals a read made while the reader shared no reads:
/// everything here is derived from visible-read watermarks, never from `readUpTo`, except the
/// user's own unread counts.
extension ReceiptEngine {
    /// A message's status.
    ///
    /// - Parameters:
    ///   - conversation: The conversation id.
    ///   - message: The message id.
    /// - Returns: The status, or nil if the conversation or (retained) message is unknown.
    public func status(conversation: String, message: String) -> MessageStatus? {
        guard let (c, p) = locate(conversation: conversation, message: message) else { return nil }
        return messageStatus(conversation: c, position: p)
    }

    /// The "Read by" sheet of a message: each counted recipient (never the sender) as read
    /// (most recent read first, ties by user id), delivered but not visibly read, or not
    /// delivered (both by user id).
    ///
    /// The lists match the status's counts exactly: `read.count == readCount`,
    /// `read.count + delivered.count == deliveredCount`, all three sum to `recipientCount`.
    /// So a recipient who left or was deleted before visibly reading is removed from the sheet
    /// (as seed 003 asks), while one who read stays, flagged `hasLeft` or `isUserDeleted`.
    /// A system message has no recipients: all three lists are empty.
    ///
    /// - Parameters:
    ///   - conversation: The conversation id.
    ///   - message: The message id.
    /// - Returns: The detail, or nil if the conversation or (retained) message is unknown.
    public func readDetail(conversation: String, message: String) -> ReadDetail? {
        sheet(conversation: conversation, message: message, page: nil)
    }

    /// One page of the "Read by" sheet: the three lists read as one (readers, then delivered,
    /// then not delivered), its next `page.size` lines after the place `page.after` names.
    ///
    /// - Parameters:
    ///   - conversation: The conversation id.
    ///   - message: The message id.
    ///   - page: The page.
    /// - Returns: The page, or nil if the conversation or (retained) message is unknown.
    /// - Throws: `ReadDetailCursor.NotACursor` if `page.after` is not a `nextCursor` of this
    ///   message's sheet.
    public func readDetail(
        conversation: String,
        message: String,
        page: ReadDetailPage
    ) throws(ReadDetailCursor.NotACursor) -> ReadDetail? {
        var after: ReadDetailCursor?
        if let token = page.after {
            after = ReadDetailCursor(token: token, conversation: conversation, message: message)
            guard after != nil else { throw ReadDetailCursor.NotACursor(token: token) }
        }
        return sheet(conversation: conversation, message: message, page: (max(page.size, 1), after))
    }

    /// The whole sheet, or the page of `page.size` lines after `page.after`.
    private func sheet(
        conversation: String,
        message: String,
        page: (size: Int, after: ReadDetailCursor?)?
    ) -> ReadDetail? {
        guard let (c, p) = locate(conversation: conversation, message: message) else { return nil }
        let state = conversations[c]
        let record = state.messages[p]
        let s = state.base + UInt32(p)
        var read: [RecipientReceipt] = []
        var delivered: [RecipientReceipt] = []
        var notDelivered: [RecipientReceipt] = []
        if record.flags & MessageRecord.Flag.hasRecipients != 0 {
            for slot in state.members.indices {
                let member = state.members[slot]
                let deliveredUpTo: UInt32
                let visibleReadUpTo: UInt32
                var hasLeft = false
                switch state.standing(of: UInt32(slot), at: s, sender: record.sender) {
                case .none:
                    continue
                case .current(let d, let v):
                    (deliveredUpTo, visibleReadUpTo) = (d, v)
                case .former(let d, let v, let byDeletion):
                    guard v >= s else { continue }
                    (deliveredUpTo, visibleReadUpTo) = (d, v)
                    hasLeft = !byDeletion
                }
                let user = users[Int(member.user)]
                let heads = state.receiptHeads(of: UInt32(slot), at: s)
                let deliveredAt = deliveredUpTo >= s ? state.firstCovering(s, head: heads.delivered) : nil
                let readAt = visibleReadUpTo >= s ? state.firstCovering(s, head: heads.visible) : nil
                let line = RecipientReceipt(
                    user: user.id,
                    state: readAt != nil ? .read : deliveredAt != nil ? .delivered : .notDelivered,
                    deliveredAt: deliveredAt.map(Timestamp.init),
                    readAt: readAt.map(Timestamp.init),
                    isUserDeleted: user.isDeleted,
                    hasLeft: hasLeft
                )
                switch line.state {
                case .read: read.append(line)
                case .delivered: delivered.append(line)
                case .notDelivered: notDelivered.append(line)
                }
            }
        }
        read.sort { ($1.readAt!, $0.user) < ($0.readAt!, $1.user) }
        delivered.sort { $0.user < $1.user }
        notDelivered.sort { $0.user < $1.user }
        var detail = ReadDetail(
            status: messageStatus(conversation: c, position: p),
            read: read,
            delivered: delivered,
            notDelivered: notDelivered
        )
        if let page {
            let next = Self.cut(&detail, size: page.size, after: page.after)
            detail.nextCursor = next?.token(conversation: conversation, message: message)
        }
        return detail
    }

    /// Keeps only one page of a whole sheet; returns where the next page starts (nil at the end).
    ///
    /// Each list is sorted in the sheet's order, so where the page starts in it is found by
    /// binary search, and only the lines kept are compared or copied.
    private static func cut(_ detail: inout ReadDetail, size: Int, after: ReadDetailCursor?) -> ReadDetailCursor? {
        var room = size
        var last: ReadDetailCursor?
        var more = false
        func place(_ line: RecipientReceipt) -> ReadDetailCursor {
            ReadDetailCursor(state: line.state, readAt: line.readAt?.milliseconds ?? 0, user: line.user)
        }
        func keep(_ lines: [RecipientReceipt]) -> [RecipientReceipt] {
            var start = 0
            if let after {
                var end = lines.count
                while start < end {
                    let middle = (start + end) / 2
                    if place(lines[middle]) <= after { start = middle + 1 } else { end = middle }
                }
            }
            guard start < lines.count else { return [] }
            guard room > 0 else {
                more = true
                return []
            }
            let taken = Array(lines[start..<min(lines.count, start + room)])
            room -= taken.count
            if start + taken.count < lines.count { more = true }
            last = taken.last.map(place) ?? last
            return taken
        }
        detail.read = keep(detail.read)
        detail.delivered = keep(detail.delivered)
        detail.notDelivered = keep(detail.notDelivered)
        return more ? last : nil
    }

    /// The status of the sender's latest normal (non-system) message in a conversation, the one
    /// under which a client shows the receipt.
    ///
    /// - Parameters:
    ///   - conversation: The conversation id.
    ///   - sender: The sender.
    /// - Returns: The status, or nil if they sent none that is still retained.
    public func lastSent(conversation: String, sender: String) -> MessageStatus? {
        guard let c = conversationIndex(of: conversation), let u = userIndex(of: sender) else { return nil }
        let state = conversations[Int(c)]
        guard let slot = state.slot(of: u), let p = state.position(ofSequence: state.members[Int(slot)].lastNormalSent)
        else { return nil }
        return messageStatus(conversation: Int(c), position: p)
    }

    /// Unread counts of a user.
    ///
    /// - Parameters:
    ///   - user: The user.
    ///   - conversations: Which conversations (unknown ones are left out); empty means every
    ///     conversation the user is currently a member of that this worker serves, in
    ///     first-join order.
    /// - Returns: One entry per conversation.
    public func unreadCounts(user: String, conversations requested: [String]) -> [UnreadCount] {
        let u = userIndex(of: user)
        return listed(user: u, conversations: requested).map { c in
            guard let u, let slot = conversations[Int(c)].slot(of: u) else {
                return UnreadCount(
                    conversation: conversations[Int(c)].id,
                    unread: 0,
                    isMarkedUnread: false,
                    readUpTo: 0
                )
            }
            return readState(Int(c), slot: slot)
        }
    }

    /// A user's read states in the threads they hold a place in (they took part, were mentioned,
    /// follow or followed, or gave a receipt there), read ones included, so that a device
    /// starting from them also learns of threads read elsewhere.
    ///
    /// - Parameters:
    ///   - user: The user.
    ///   - conversations: As for `unreadCounts(user:conversations:)`.
    /// - Returns: One entry per thread, by conversation, in the order the threads began.
    public func threadReadStates(user: String, conversations requested: [String]) -> [ThreadReadState] {
        guard let u = userIndex(of: user) else { return [] }
        var states: [ThreadReadState] = []
        for c in listed(user: u, conversations: requested) {
            guard let slot = conversations[Int(c)].slot(of: u) else { continue }
            for t in conversations[Int(c)].threads.indices where conversations[Int(c)].threads[t].member(slot) != nil {
                states.append(threadReadState(Int(c), slot: slot, thread: t))
            }
        }
        return states
    }

    /// The conversations an unread-count answer lists: those asked for that this worker holds, or
    /// with none asked every one the user is a member of; only those this worker serves.
    private func listed(user u: UInt32?, conversations requested: [String]) -> [UInt32] {
        var indices: [UInt32] = []
        if requested.isEmpty {
            guard let u else { return [] }
            for c in conversations(ofUser: u) {
                if let slot = conversations[Int(c)].slot(of: u), conversations[Int(c)].members[Int(slot)].isMember {
                    indices.append(c)
                }
            }
        } else {
            indices = requested.compactMap { conversationIndex(of: $0) }
        }
        // Only the worker that serves a conversation lists it: one given away in a move is its
        // new owner's to count, and a user-wide list (every worker's answer is put together)
        // leaves out one frozen for its export too, since its receiver lists it once imported.
        indices.removeAll {
            let placement = conversations[Int($0)].placement
            return placement == .released || (requested.isEmpty && placement == .frozen)
        }
        return indices
    }

    /// The user's read state in the first conversation of theirs that this worker serves (in
    /// first-join order), to announce on their topic when a device starts following it.
    ///
    /// - Parameter user: The user.
    /// - Returns: The state, or nil if this worker serves no conversation the user is a member of.
    public func firstReadState(of user: String) -> UnreadCount? {
        guard let u = userIndex(of: user) else { return nil }
        for c in conversations(ofUser: u) where conversations[Int(c)].placement == .owned {
            if let slot = conversations[Int(c)].slot(of: u), conversations[Int(c)].members[Int(slot)].isMember {
                return readState(Int(c), slot: slot)
            }
        }
        return nil
    }

    /// A conversation's members and its latest message statuses, for a subscriber (re)starting.
    ///
    /// - Parameters:
    ///   - conversation: The conversation id.
    ///   - limit: At most this many latest messages; 0 means every retained message.
    /// - Returns: The snapshot, or nil if the conversation is unknown.
    public func snapshot(conversation: String, limit: Int) -> ConversationSnapshot? {
        guard let c = conversationIndex(of: conversation) else { return nil }
        let state = conversations[Int(c)]
        let first = limit > 0 ? max(0, state.messages.count - limit) : 0
        return ConversationSnapshot(
            conversation: state.id,
            kind: state.kind,
            members: state.members.filter(\.isMember).map { users[Int($0.user)].id },
            messages: (first..<state.messages.count).map { messageStatus(conversation: Int(c), position: $0) }
        )
    }

    /// Direct or group, or nil if the conversation is unknown.
    public func kind(of conversation: String) -> ConversationKind? {
        conversationIndex(of: conversation).map { conversations[Int($0)].kind }
    }

    // MARK: - Helpers

    /// (conversation index, message position) of a retained message.
    func locate(conversation: String, message: String) -> (Int, Int)? {
        guard let c = conversationIndex(of: conversation), let s = conversations[Int(c)].sequence(ofMessage: message)
        else {
            return nil
        }
        return (Int(c), Int(s - conversations[Int(c)].base))
    }

    /// The public status of the message at `position` of conversation `c`.
    ///
    /// Reads the conversation in place (`all[c].field`) rather than through a copy of it: a
    /// copy retains every array of the conversation, and this runs for every published change.
    func messageStatus(conversation c: Int, position p: Int) -> MessageStatus {
        conversations.withUnsafeBufferPointer { all in
            let record = all[c].messages[p]
            let sequence = all[c].base + UInt32(p)
            let sent = record.storedSentAt == MessageRecord.farSentAt ? all[c].sentAt(position: p) : record.storedSentAt
            let message: String
            if p == all[c].messages.count - 1, let last = all[c].lastMessageID {
                message = last
            } else {
                message = IDTable.id(at: p, bytes: all[c].messageIDs.bytes, ends: all[c].messageIDs.ends)
            }
            func time(_ offset: UInt32, isRead: Bool) -> Timestamp? {
                ConversationState.time(
                    offset: offset,
                    sent: sent,
                    sequence: sequence,
                    isRead: isRead,
                    farTimes: all[c].farTimes
                ).map(Timestamp.init(milliseconds:))
            }
            return MessageStatus(
                conversation: all[c].id,
                message: message,
                sequence: UInt64(sequence),
                sender: users[Int(all[c].members[Int(record.sender)].user)].id,
                sentAt: Timestamp(milliseconds: sent),
                status: ReceiptStatus(rawValue: record.status) ?? .none,
                recipientCount: Int(record.counted),
                deliveredCount: Int(record.deliveredCount),
                readCount: Int(record.readCount),
                deliveredAt: time(record.deliveredOffset, isRead: false),
                readAt: time(record.readOffset, isRead: true),
                isSystem: record.flags & MessageRecord.Flag.system != 0,
                isEdited: record.flags & MessageRecord.Flag.edited != 0,
                isDeleted: record.flags & MessageRecord.Flag.deleted != 0,
                threadRoot: record.flags & MessageRecord.Flag.threadReply == 0
                    ? nil : all[c].threadOfReply[sequence].map { all[c].threads[Int($0)].rootID }
            )
        }
    }
}
