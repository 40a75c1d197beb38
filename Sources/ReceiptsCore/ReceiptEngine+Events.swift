/// The rules of each event kind (SPEC §4).
extension ReceiptEngine {
    /// Applies an event that is not a duplicate; mutates nothing when it rejects.
    ///
    /// One `switch` binds the payload: every further look at `event.kind` (another switch,
    /// `kind.conversation`) would copy the enum and retain each of its strings again.
    mutating func handle(_ event: Event, now: Int64, changes: inout ChangeSet) -> EventOutcome {
        switch event.kind {
        case .unknown:
            return reject(.unknownEventKind, "the event has no kind this build knows")
        case .invalid(let detail):
            return reject(.invalidEvent, detail)
        case .userDeleted(let user):
            return deleteUser(user, now: now, changes: &changes)
        case .receiptPrivacy(let user, let shareReads):
            guard !user.isEmpty else { return reject(.invalidEvent, "receipt privacy needs a user id") }
            if isDeleted(user) { return reject(.userDeleted, "user \(user) was deleted") }
            guard hasRoom(forUsers: [user]) else { return userTableFull() }
            let u = userIndex(creating: user)
            users[Int(u)].sharesReads = shareReads
            return .accepted(held: false)
        case .conversationReceiptPrivacy(let conversation, let user, let shareReads):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return setPrivacy(conversation, c, user: user, shareReads: shareReads)
        case .conversationUpserted(let conversation, let kind, let members):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return upsert(conversation, c, kind: kind, members: members, now: now, changes: &changes)
        case .memberJoined(let conversation, let user):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return join(conversation, c, user: user)
        case .memberLeft(let conversation, let user):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return leave(conversation, c, user: user, now: now, changes: &changes)
        case .messageSent(let conversation, let message, let sender, let isSystem, let mentions, let thread):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return send(
                conversation,
                c,
                message: message,
                sender: sender,
                isSystem: isSystem,
                mentions: mentions,
                thread: thread?.isEmpty == true ? nil : thread,
                now: now,
                changes: &changes
            )
        case .delivered(let conversation, let user, let message, let thread):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            let thread = thread?.isEmpty == true ? nil : thread
            guard !message.isEmpty || thread != nil else {
                return reject(.invalidEvent, "a delivery needs a message id (or a thread)")
            }
            return receipt(
                conversation,
                c,
                user: user,
                message: message.isEmpty ? nil : message,
                thread: thread,
                isRead: false,
                clientTime: event.clientTime,
                now: now,
                changes: &changes
            )
        case .read(let conversation, let user, let message, let thread):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return receipt(
                conversation,
                c,
                user: user,
                message: message?.isEmpty == true ? nil : message,
                thread: thread?.isEmpty == true ? nil : thread,
                isRead: true,
                clientTime: event.clientTime,
                now: now,
                changes: &changes
            )
        case .threadFollowed(let conversation, let user, let thread, let follows):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return followThread(conversation, c, user: user, thread: thread, follows: follows)
        case .messageEdited(let conversation, let message):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return flag(conversation, c, message: message, MessageRecord.Flag.edited, changes: &changes)
        case .messageDeleted(let conversation, let message):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return flag(conversation, c, message: message, MessageRecord.Flag.deleted, changes: &changes)
        case .markedUnread(let conversation, let user):
            let (c, refusal) = place(conversation, event.id, &changes)
            if let refusal { return refusal }
            return markUnread(conversation, c, user: user)
        }
    }

    /// The answer to an event that its source's replay window settles before any rule: a
    /// duplicate if the window recorded its id, a rejection if the id is older than the
    /// window; nil if the event is to be evaluated.
    ///
    /// An id older than the window is not called a duplicate: the window no longer knows
    /// whether it saw it, and "duplicate" tells the gateway the event was applied, which would
    /// lose a never-seen event silently. Neither answer records anything, so replaying the log
    /// decides the same id the same way.
    ///
    /// - Parameters:
    ///   - id: The event's id.
    ///   - window: The position of its source's window (from `replayWindows.find`); nil if the
    ///     source has none yet.
    @inline(__always)
    func screen(_ id: EventID, at window: Int?) -> EventOutcome? {
        switch replayWindows.verdict(id.sequence, at: window) {
        case .new: nil
        case .seen: .duplicate
        case .belowWindow: window.map { Self.outsideReplayWindow(id, replayWindows.windows[$0]) }
        }
    }

    /// Checks the conversation id and that this worker serves the conversation; returns its
    /// index (nil if unknown, which the kind's rules reject or create) or the rejection, and
    /// points `changes` at it.
    ///
    /// One lookup serves the placement check and the rules: a conversation held and owned
    /// here (nearly every event) costs one byte compare; only an unknown, frozen or released
    /// one goes through `route`, and only an imported one is checked against the replay
    /// windows of the worker it came from (`id`: a retry of an event applied there is a
    /// duplicate).
    ///
    /// `mutating` although it only reads: called from a mutating method, a non-mutating call
    /// that is not inlined gets a copy of the whole engine struct (232 bytes) every event.
    private mutating func place(
        _ conversation: String,
        _ id: EventID,
        _ changes: inout ChangeSet
    ) -> (UInt32?, EventOutcome?) {
        guard !conversation.isEmpty else { return (nil, reject(.invalidEvent, "the event needs a conversation id")) }
        let c = conversationIndex(of: conversation)
        if let c, conversations[Int(c)].placement == .owned {
            let sender = conversations[Int(c)].importedFrom
            if sender >= 0, isDuplicateOfMovedEvent(id, sender: Int(sender)) { return (nil, .duplicate) }
            changes.conversation = c
            return (c, nil)
        }
        switch route(conversation, index: c) {
        case .serve:
            if let c { changes.conversation = c }
            return (c, nil)
        case .notOwner(let owner):
            return (
                nil,
                .rejected(
                    Rejection(.notOwner, "conversation \(conversation) is owned by worker \(owner)", ownerWorker: owner)
                )
            )
        case .moving:
            return (nil, reject(.moving, "conversation \(conversation) is moving between workers: send it again"))
        }
    }

    // MARK: - Messages flags and unread marks

    private mutating func flag(
        _ conversation: String,
        _ c: UInt32?,
        message: String,
        _ bit: UInt8,
        changes: inout ChangeSet
    ) -> EventOutcome {
        guard !message.isEmpty else { return reject(.invalidEvent, "the event needs a message id") }
        guard let c else { return unknownConversation(conversation) }
        guard let s = sequence(Int(c), ofMessage: message) else {
            return reject(.unknownMessage, "message \(message) is unknown in conversation \(conversation)")
        }
        let p = Int(s - conversations[Int(c)].base)
        let wasDeleted = conversations[Int(c)].messages[p].flags & MessageRecord.Flag.deleted != 0
        conversations[Int(c)].messages[p].flags |= bit
        changes.add(s)
        if bit == MessageRecord.Flag.deleted, !wasDeleted {
            // The users it names lose a mention they had not read: their badge changes.
            if let thread = threadIndex(Int(c), ofReply: s) {
                // A reply: its followers' (and the named's) unread counts in the thread change,
                // but its sender's.
                let sender = conversations[Int(c)].messages[p].sender
                let told = Set(conversations[Int(c)].followers(of: thread) + conversations[Int(c)].mentioned(in: s))
                for slot in told.sorted()
                where slot != sender && conversations[Int(c)].members[Int(slot)].isMember
                    && conversations[Int(c)].threads[thread].member(slot)?.readUpTo ?? 0 < s
                {
                    threadReadStateChanged(c, slot: slot, thread: thread)
                }
            } else {
                for slot in conversations[Int(c)].mentioned(in: s)
                where conversations[Int(c)].members[Int(slot)].readUpTo < s {
                    readStateChanged(c, slot: slot)
                }
            }
        }
        return .accepted(held: false)
    }

    private mutating func markUnread(_ conversation: String, _ c: UInt32?, user: String) -> EventOutcome {
        guard !user.isEmpty else { return reject(.invalidEvent, "marked unread needs a user id") }
        guard let c else { return unknownConversation(conversation) }
        if isDeleted(user) { return reject(.userDeleted, "user \(user) was deleted") }
        guard let u = userIndex(of: user), let slot = slot(Int(c), of: u),
            conversations[Int(c)].members[Int(slot)].isMember
        else {
            return reject(.notAMember, "user \(user) is not a member of conversation \(conversation)")
        }
        if conversations[Int(c)].members[Int(slot)].flags & MemberRecord.Flag.markedUnread == 0 {
            conversations[Int(c)].members[Int(slot)].flags |= MemberRecord.Flag.markedUnread
            readStateChanged(c, slot: slot)
        }
        return .accepted(held: false)
    }

    // MARK: - Membership

    private mutating func upsert(
        _ conversation: String,
        _ existing: UInt32?,
        kind: ConversationKind,
        members: [String],
        now: Int64,
        changes: inout ChangeSet
    ) -> EventOutcome {
        // Hashing each id into a fresh `Set` cost a third of an upsert; scanning the handful of
        // members a conversation usually has is cheaper. Large member lists still hash.
        var distinct: [String] = []
        distinct.reserveCapacity(members.count)
        var seen: Set<String>? = members.count > 16 ? Set(minimumCapacity: members.count) : nil
        for member in members {
            guard !member.isEmpty else { return reject(.invalidEvent, "a member id is empty") }
            if seen != nil ? seen!.insert(member).inserted : !distinct.contains(member) { distinct.append(member) }
        }
        if kind == .direct && distinct.count != 2 {
            return reject(
                .invalidEvent,
                "a direct conversation has exactly two distinct members, not \(distinct.count)"
            )
        }
        if let existing, conversations[Int(existing)].kind != kind {
            return reject(
                .invalidEvent,
                "conversation \(conversation) is \(conversations[Int(existing)].kind), its kind cannot change"
            )
        }
        for member in distinct where isDeleted(member) {
            return reject(.userDeleted, "user \(member) was deleted and cannot join")
        }
        guard hasRoom(forUsers: distinct) else { return userTableFull() }
        let c: UInt32
        if let existing {
            c = existing
        } else {
            c = UInt32(conversations.count)
            var state = ConversationState(id: conversation, kind: kind)
            state.members.reserveCapacity(distinct.count)
            conversations.reserveGently(1)
            conversations.append(state)
            conversationIDs.append(conversation)
        }
        changes.conversation = c
        for slot in conversations[Int(c)].members.indices where conversations[Int(c)].members[slot].isMember {
            let user = users[Int(conversations[Int(c)].members[slot].user)].id
            if !(seen?.contains(user) ?? distinct.contains(user)) {
                conversations[Int(c)].leave(slot: UInt32(slot), byDeletion: false, time: now, changes: &changes)
                readStateChanged(c, slot: UInt32(slot))
            }
        }
        for member in distinct { addMember(member, to: c) }
        return .accepted(held: false)
    }

    private mutating func join(_ conversation: String, _ c: UInt32?, user: String) -> EventOutcome {
        guard !user.isEmpty else { return reject(.invalidEvent, "member joined needs a user id") }
        guard let c else { return unknownConversation(conversation) }
        if isDeleted(user) { return reject(.userDeleted, "user \(user) was deleted and cannot join") }
        let ci = Int(c)
        let slot = userIndex(of: user).flatMap { self.slot(ci, of: $0) }
        if let slot, conversations[ci].members[Int(slot)].isMember { return .accepted(held: false) }
        if conversations[ci].kind == .direct && conversations[ci].memberCount >= 2 {
            return reject(.invalidEvent, "direct conversation \(conversation) already has two members")
        }
        guard hasRoom(forUsers: [user]) else { return userTableFull() }
        addMember(user, to: c)
        return .accepted(held: false)
    }

    private mutating func leave(
        _ conversation: String,
        _ c: UInt32?,
        user: String,
        now: Int64,
        changes: inout ChangeSet
    ) -> EventOutcome {
        guard !user.isEmpty else { return reject(.invalidEvent, "member left needs a user id") }
        guard let c else { return unknownConversation(conversation) }
        if isDeleted(user) { return reject(.userDeleted, "user \(user) was deleted") }
        guard let u = userIndex(of: user), let slot = slot(Int(c), of: u),
            conversations[Int(c)].members[Int(slot)].isMember
        else {
            return .accepted(held: false)
        }
        conversations[Int(c)].leave(slot: slot, byDeletion: false, time: now, changes: &changes)
        readStateChanged(c, slot: slot)
        return .accepted(held: false)
    }

    /// Makes `user` a member of conversation `c` (a no-op for a current member); a new or
    /// returning member's read state is reported, so that their devices show the conversation.
    private mutating func addMember(_ user: String, to c: UInt32) {
        let u = userIndex(creating: user)
        let slotsBefore = conversations[Int(c)].members.count
        let wasMember = slot(Int(c), of: u).map { conversations[Int(c)].members[Int($0)].isMember } ?? false
        let slot = conversations[Int(c)].join(user: u)
        if conversations[Int(c)].members.count > slotsBefore {
            memberSlotCount += 1
            link(user: u, to: c, slot: slot)
        }
        if !wasMember { readStateChanged(c, slot: slot) }
    }

    private mutating func deleteUser(_ user: String, now: Int64, changes: inout ChangeSet) -> EventOutcome {
        guard !user.isEmpty else { return reject(.invalidEvent, "user deleted needs a user id") }
        guard hasRoom(forUsers: [user]) else { return userTableFull() }
        let u = userIndex(creating: user)
        guard !users[Int(u)].isDeleted else { return .accepted(held: false) }
        users[Int(u)].isDeleted = true
        // A conversation frozen or released in a move is its receiver's to change: an import
        // takes deleted users out of the conversations it brings.
        for c in conversations(ofUser: u) where conversations[Int(c)].placement == .owned {
            guard let slot = slot(Int(c), of: u), conversations[Int(c)].members[Int(slot)].isMember else { continue }
            changes.conversation = c
            conversations[Int(c)].leave(slot: slot, byDeletion: true, time: now, changes: &changes)
            readStateChanged(c, slot: slot)
        }
        return .accepted(held: false)
    }

    // MARK: - Messages and receipts

    private mutating func send(
        _ conversation: String,
        _ c: UInt32?,
        message: String,
        sender: String,
        isSystem: Bool,
        mentions: Mentions,
        thread: String?,
        now: Int64,
        changes: inout ChangeSet
    ) -> EventOutcome {
        guard !message.isEmpty, !sender.isEmpty else {
            return reject(.invalidEvent, "message sent needs a message id and a sender id")
        }
        guard mentions.users.count <= Mentions.userLimit else {
            return reject(
                .invalidEvent,
                "message \(message) names \(mentions.users.count) users; at most \(Mentions.userLimit) may be mentioned"
            )
        }
        guard !mentions.users.contains(where: \.isEmpty) else {
            return reject(.invalidEvent, "message \(message) mentions an empty user id")
        }
        guard let c else { return unknownConversation(conversation) }
        let u = userIndex(of: sender)
        if let u, users[Int(u)].isDeleted { return reject(.userDeleted, "user \(sender) was deleted") }
        guard let u, let slot = slot(Int(c), of: u),
            conversations[Int(c)].members[Int(slot)].isMember
        else {
            return reject(.notAMember, "sender \(sender) is not a member of conversation \(conversation)")
        }
        if sequence(Int(c), ofMessage: message) != nil {
            return reject(.messageExists, "message \(message) already exists in conversation \(conversation)")
        }
        // A reply's thread: its root's, or the thread of the reply named as its root.
        var threadRoot: (sequence: UInt32, id: String)?
        if let thread {
            guard let named = sequence(Int(c), ofMessage: thread) else {
                return reject(.unknownMessage, "thread root \(thread) is unknown in conversation \(conversation)")
            }
            if let t = conversations[Int(c)].threadOfReply[named] {
                let root = conversations[Int(c)].threads[Int(t)]
                threadRoot = (root.root, root.rootID)
            } else {
                threadRoot = (named, thread)
            }
        }
        guard conversations[Int(c)].lastSequence < ConversationState.sequenceLimit else {
            return reject(.invalidEvent, "conversation \(conversation) has reached its message limit")
        }
        let s = conversations[Int(c)].appendMessage(
            id: message,
            sender: slot,
            isSystem: isSystem,
            mentionsEveryone: mentions.everyone,
            isReply: threadRoot != nil,
            sentAt: now
        )
        messageCount += 1
        changes.add(s)
        var replyThread: Int?
        if let threadRoot {
            let t = conversations[Int(c)].threadIndex(creatingFor: threadRoot.sequence, rootID: threadRoot.id)
            replyThread = t
            for follower in conversations[Int(c)].addReply(s, toThread: t, sender: slot) {
                threadReadStateChanged(c, slot: follower, thread: t)
            }
        }
        if !isSystem, !mentions.users.isEmpty {
            addMentions(mentions.users, conversation: c, sequence: s, sender: slot, thread: replyThread)
        }
        if pending.count > 0 {
            for held in pending.take(conversation: c, message: message) {
                applyHeld(held, conversation: c, sequence: s, changes: &changes)
            }
        }
        return .accepted(held: false)
    }

    /// Records the named mentions of message `s` for the users who received it (current
    /// members but its sender; anyone else named is ignored), each once, and reports their read
    /// states: each named recipient's badge changed. In a thread (`thread`, the reply's) the
    /// named follow it, and their read state there is the one that changed.
    private mutating func addMentions(
        _ named: [String],
        conversation c: UInt32,
        sequence s: UInt32,
        sender: UInt32,
        thread: Int?
    ) {
        var slots: [UInt32] = []
        for user in named {
            guard let u = userIndex(of: user), let slot = slot(Int(c), of: u), slot != sender,
                conversations[Int(c)].members[Int(slot)].isMember
            else { continue }
            slots.append(slot)
        }
        slots.sort()
        var previous: UInt32?
        for slot in slots where slot != previous {
            previous = slot
            conversations[Int(c)].mentions.append(MentionRecord(sequence: s, member: slot))
            if let thread {
                _ = conversations[Int(c)].follow(thread, slot: slot)
                threadReadStateChanged(c, slot: slot, thread: thread)
            } else {
                readStateChanged(c, slot: slot)
            }
        }
    }

    /// Applies a receipt that waited for message `s`, at its recorded time (but not before the
    /// message was sent); discards it if the user turned out not to be a recipient.
    private mutating func applyHeld(
        _ held: PendingReceipts.Receipt,
        conversation c: UInt32,
        sequence s: UInt32,
        changes: inout ChangeSet
    ) {
        guard let u = userIndex(of: held.user), !users[Int(u)].isDeleted, let slot = slot(Int(c), of: u) else {
            discardedHeldReceipts += 1
            return
        }
        let message = conversations[Int(c)].messages[Int(s - conversations[Int(c)].base)]
        guard case .current = standing(Int(c), of: slot, at: s, sender: message.sender) else {
            discardedHeldReceipts += 1
            return
        }
        let kind = PendingReceipts.Kind(rawValue: held.kind) ?? .delivered
        let replyThread = threadIndex(Int(c), ofReply: s)
        if held.thread != 0, replyThread.map({ conversations[Int(c)].threads[$0].root }) != held.thread {
            // Not a reply in the thread the receipt named: rejected, had it come after it.
            discardedHeldReceipts += 1
            return
        }
        let visible = kind == .visibleRead && sharesReads(Int(c), user: u, slot: slot)
        let time = max(held.time, sentAt(Int(c), position: Int(s - conversations[Int(c)].base)))
        if let t = replyThread {
            let moved = conversations[Int(c)].advanceInThread(
                t,
                slot: slot,
                to: s,
                isRead: kind != .delivered,
                visible: visible,
                time: time,
                changes: &changes
            )
            if moved { threadReadStateChanged(c, slot: slot, thread: t) }
            return
        }
        let before = conversations[Int(c)].members[Int(slot)].readState
        conversations[Int(c)].advance(
            slot: slot,
            to: s,
            isRead: kind != .delivered,
            visible: visible,
            time: time,
            changes: &changes
        )
        if conversations[Int(c)].members[Int(slot)].readState != before { readStateChanged(c, slot: slot) }
    }

    private mutating func receipt(
        _ conversation: String,
        _ c: UInt32?,
        user: String,
        message: String?,
        thread: String?,
        isRead: Bool,
        clientTime: Timestamp?,
        now: Int64,
        changes: inout ChangeSet
    ) -> EventOutcome {
        guard !user.isEmpty else { return reject(.invalidEvent, "a receipt needs a user id") }
        guard let c else { return unknownConversation(conversation) }
        // Fields are read through `conversations[ci]` rather than a local copy of the
        // conversation: a copy would retain every array, and one still alive at the mutation
        // below would make it copy the whole conversation.
        let ci = Int(c)
        let u = userIndex(of: user)
        if let u, users[Int(u)].isDeleted { return reject(.userDeleted, "user \(user) was deleted") }
        let slot = u.flatMap { self.slot(ci, of: $0) }
        // A thread named: its root must be known (a reply names its thread), and a message
        // named with it must be one of its replies.
        var namedThread: Int?
        var namedRoot: UInt32 = 0
        if let thread {
            guard let named = sequence(ci, ofMessage: thread) else {
                return reject(.unknownMessage, "thread \(thread) is unknown in conversation \(conversation)")
            }
            namedThread = (conversations[ci].threadOfReply[named] ?? conversations[ci].threadOfRoot[named]).map(
                Int.init
            )
            namedRoot = namedThread.map { conversations[ci].threads[$0].root } ?? named
            if message == nil {
                guard let namedThread else {
                    // No reply yet: nothing to cover.
                    guard let slot, conversations[ci].members[Int(slot)].isMember else {
                        return reject(.notAMember, "user \(user) is not a member of conversation \(conversation)")
                    }
                    return .accepted(held: false)
                }
                return threadReceipt(
                    conversation,
                    c,
                    user: user,
                    thread: namedThread,
                    upTo: nil,
                    isRead: isRead,
                    clientTime: clientTime,
                    now: now,
                    changes: &changes
                )
            }
        }
        let target: UInt32
        if let message {
            guard let s = sequence(ci, ofMessage: message) else {
                return hold(
                    c,
                    user: user,
                    message: message,
                    thread: namedRoot,
                    isRead: isRead,
                    clientTime: clientTime,
                    now: now
                )
            }
            let replyThread = threadIndex(ci, ofReply: s)
            if let thread, replyThread == nil || replyThread != namedThread {
                return reject(.invalidEvent, "message \(message) is not a reply in thread \(thread)")
            }
            if let replyThread {
                // A reply is read in its thread, whether or not the event names it.
                return threadReceipt(
                    conversation,
                    c,
                    user: user,
                    thread: replyThread,
                    upTo: (s, message),
                    isRead: isRead,
                    clientTime: clientTime,
                    now: now,
                    changes: &changes
                )
            }
            let sender = conversations[ci].messages[Int(s - conversations[ci].base)].sender
            let standing: ConversationState.Standing =
                slot.map { self.standing(ci, of: $0, at: s, sender: sender) } ?? .none
            if isRead, let slot, slot != sender, !standing.isCurrent, conversations[ci].isRejoined(slot) {
                // A rejoined member reads history from before their return: their own watermark
                // (their badge) moves, no receipt is added (README, "Leaving and rejoining").
                let before = conversations[ci].members[Int(slot)].readState
                conversations[ci].advanceOwnRead(slot: slot, to: s)
                if conversations[ci].members[Int(slot)].readState != before { readStateChanged(c, slot: slot) }
                return .accepted(held: false)
            }
            if let refusal = refusal(standing, conversation, user: user, isSender: slot == sender, message: message) {
                return refusal
            }
            target = s
        } else {
            guard let slot, conversations[ci].members[Int(slot)].isMember else {
                return reject(.notAMember, "user \(user) is not a member of conversation \(conversation)")
            }
            target = conversations[ci].lastSequence
        }
        guard let u, let slot, target > 0 else {
            if let slot, isRead, conversations[ci].members[Int(slot)].flags & MemberRecord.Flag.markedUnread != 0 {
                conversations[ci].members[Int(slot)].flags &= ~MemberRecord.Flag.markedUnread
                readStateChanged(c, slot: slot)
            }
            return .accepted(held: false)
        }
        let time = receiptTime(ci, of: target, clientTime: clientTime, now: now)
        let visible = isRead && sharesReads(ci, user: u, slot: slot)
        let before = conversations[ci].members[Int(slot)].readState
        conversations[ci].advance(
            slot: slot,
            to: target,
            isRead: isRead,
            visible: visible,
            time: time,
            changes: &changes
        )
        if isRead, conversations[ci].members[Int(slot)].readState != before { readStateChanged(c, slot: slot) }
        return .accepted(held: false)
    }

    /// A receipt in thread `t`: up to reply `reply`, or with nil up to its last reply. It moves
    /// the user's watermarks in the thread only; the rules are those of the main timeline (a
    /// rejoined member's read of a reply from before their return moves their own watermark).
    private mutating func threadReceipt(
        _ conversation: String,
        _ c: UInt32,
        user: String,
        thread t: Int,
        upTo reply: (sequence: UInt32, id: String)?,
        isRead: Bool,
        clientTime: Timestamp?,
        now: Int64,
        changes: inout ChangeSet
    ) -> EventOutcome {
        let ci = Int(c)
        let u = userIndex(of: user)
        let slot = u.flatMap { self.slot(ci, of: $0) }
        let target: UInt32
        if let reply {
            let sender = conversations[ci].messages[Int(reply.sequence - conversations[ci].base)].sender
            let standing: ConversationState.Standing =
                slot.map { self.standing(ci, of: $0, at: reply.sequence, sender: sender) } ?? .none
            if isRead, let slot, slot != sender, !standing.isCurrent, conversations[ci].isRejoined(slot) {
                if conversations[ci].advanceOwnReadInThread(t, slot: slot, to: reply.sequence) {
                    threadReadStateChanged(c, slot: slot, thread: t)
                }
                return .accepted(held: false)
            }
            if let refusal = refusal(standing, conversation, user: user, isSender: slot == sender, message: reply.id) {
                return refusal
            }
            target = reply.sequence
        } else {
            guard let slot, conversations[ci].members[Int(slot)].isMember else {
                return reject(.notAMember, "user \(user) is not a member of conversation \(conversation)")
            }
            target = conversations[ci].threads[t].replies.last ?? 0
        }
        guard let u, let slot, target > 0 else { return .accepted(held: false) }
        let time = receiptTime(ci, of: target, clientTime: clientTime, now: now)
        let visible = isRead && sharesReads(ci, user: u, slot: slot)
        let moved = conversations[ci].advanceInThread(
            t,
            slot: slot,
            to: target,
            isRead: isRead,
            visible: visible,
            time: time,
            changes: &changes
        )
        if moved { threadReadStateChanged(c, slot: slot, thread: t) }
        return .accepted(held: false)
    }

    /// `user` follows thread `thread` (its root's id; a reply's id names its thread), or stops.
    private mutating func followThread(
        _ conversation: String,
        _ c: UInt32?,
        user: String,
        thread: String,
        follows: Bool
    ) -> EventOutcome {
        guard !user.isEmpty, !thread.isEmpty else {
            return reject(.invalidEvent, "following a thread needs a user id and the thread's root message id")
        }
        guard let c else { return unknownConversation(conversation) }
        let ci = Int(c)
        if isDeleted(user) { return reject(.userDeleted, "user \(user) was deleted") }
        guard let u = userIndex(of: user), let slot = slot(ci, of: u), conversations[ci].members[Int(slot)].isMember
        else {
            return reject(.notAMember, "user \(user) is not a member of conversation \(conversation)")
        }
        guard let named = sequence(ci, ofMessage: thread) else {
            return reject(.unknownMessage, "thread \(thread) is unknown in conversation \(conversation)")
        }
        let t =
            conversations[ci].threadOfReply[named].map(Int.init)
            ?? conversations[ci].threadIndex(creatingFor: named, rootID: thread)
        let index = conversations[ci].threadMember(t, creating: slot)
        let before = conversations[ci].threads[t].members[index].flags
        if follows {
            conversations[ci].threads[t].members[index].flags |= ThreadMember.Flag.follows
        } else {
            conversations[ci].threads[t].members[index].flags &= ~ThreadMember.Flag.follows
        }
        if conversations[ci].threads[t].members[index].flags != before {
            threadReadStateChanged(c, slot: slot, thread: t)
        }
        return .accepted(held: false)
    }

    /// Sets whether `user` shares their reads in this conversation (they must be a member).
    /// Reads already made keep what they showed; the setting applies from the next one.
    private mutating func setPrivacy(
        _ conversation: String,
        _ c: UInt32?,
        user: String,
        shareReads: Bool
    ) -> EventOutcome {
        guard !user.isEmpty else { return reject(.invalidEvent, "receipt privacy needs a user id") }
        guard let c else { return unknownConversation(conversation) }
        let ci = Int(c)
        let u = userIndex(of: user)
        if let u, users[Int(u)].isDeleted { return reject(.userDeleted, "user \(user) was deleted") }
        guard let slot = u.flatMap({ self.slot(ci, of: $0) }), conversations[ci].members[Int(slot)].isMember else {
            return reject(.notAMember, "user \(user) is not a member of conversation \(conversation)")
        }
        if shareReads {
            conversations[ci].members[Int(slot)].flags &= ~MemberRecord.Flag.readsPrivate
        } else {
            conversations[ci].members[Int(slot)].flags |= MemberRecord.Flag.readsPrivate
        }
        return .accepted(held: false)
    }

    /// Holds a receipt for message `message`, not yet known; `thread` is the root sequence of
    /// the thread it named (0 if none).
    private mutating func hold(
        _ c: UInt32,
        user: String,
        message: String,
        thread: UInt32,
        isRead: Bool,
        clientTime: Timestamp?,
        now: Int64
    ) -> EventOutcome {
        guard pending.count < configuration.pendingReceiptLimit else {
            return reject(
                .pendingFull,
                "message \(message) is unknown and \(pending.count) receipts already wait for their messages"
            )
        }
        let u = userIndex(of: user)
        let sharesHere = u.flatMap { slot(Int(c), of: $0) }.map {
            conversations[Int(c)].members[Int($0)].sharesReadsHere
        }
        let shares = (u.map { users[Int($0)].sharesReads } ?? true) && (sharesHere ?? true)
        let kind: PendingReceipts.Kind = isRead ? (shares ? .visibleRead : .privateRead) : .delivered
        pending.hold(
            PendingReceipts.Receipt(
                serial: 0,
                conversation: c,
                message: message,
                user: user,
                kind: kind.rawValue,
                time: clientTime.map { min($0.milliseconds, now) } ?? now,
                heldAt: now,
                thread: thread
            )
        )
        return .accepted(held: true)
    }

    /// Why a receipt by `user` on message `message` is refused, given their `standing` on it
    /// (`isSender`: they sent it); nil for a current recipient.
    private func refusal(
        _ standing: ConversationState.Standing,
        _ conversation: String,
        user: String,
        isSender: Bool,
        message: String
    ) -> EventOutcome? {
        switch standing {
        case .current:
            nil
        case .former:
            reject(
                .notARecipient,
                "user \(user) left conversation \(conversation) and can add no new receipts to message \(message)"
            )
        case .none where isSender:
            reject(.notARecipient, "user \(user) sent message \(message) and cannot add a receipt to it")
        case .none:
            reject(
                .notARecipient,
                "user \(user) was not a member of conversation \(conversation) when message \(message) was sent"
            )
        }
    }

    /// A receipt's time: the client's when given (never after `now`), else `now`; never before
    /// message `target` was sent.
    @inline(__always)
    private func receiptTime(_ ci: Int, of target: UInt32, clientTime: Timestamp?, now: Int64) -> Int64 {
        let sent = position(ci, ofSequence: target).map { sentAt(ci, position: $0) } ?? Int64.min
        return max(clientTime.map { min($0.milliseconds, now) } ?? now, sent)
    }

    /// Whether user `u` (member slot `slot` of conversation `ci`) shares their reads there: their
    /// global setting and the conversation's both allow it.
    @inline(__always)
    private func sharesReads(_ ci: Int, user u: UInt32, slot: UInt32) -> Bool {
        users[Int(u)].sharesReads && conversations[ci].members[Int(slot)].sharesReadsHere
    }

    // MARK: - Rejections

    private func reject(_ reason: RejectReason, _ detail: String) -> EventOutcome {
        .rejected(Rejection(reason, detail))
    }

    private func userTableFull() -> EventOutcome {
        reject(.invalidEvent, "this worker already holds \(MemberRecord.userLimit) users")
    }

    private func unknownConversation(_ conversation: String) -> EventOutcome {
        reject(.unknownConversation, "conversation \(conversation) is unknown")
    }

    private static func outsideReplayWindow(_ id: EventID, _ window: ReplayWindow) -> EventOutcome {
        .rejected(
            Rejection(
                .outsideReplayWindow,
                "event id \(id.source)#\(id.sequence) is below its source's anti-replay window on this worker "
                    + "(\(window.highest - window.size + 1)...\(window.highest)): cannot tell whether it was applied"
            )
        )
    }
}
