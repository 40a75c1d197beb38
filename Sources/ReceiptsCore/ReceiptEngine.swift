/// The receipt engine of one worker: applies events (SPEC §3) under the rules of SPEC §4 and
/// answers queries.
///
/// A value type: copying it is O(1) (every part is a copy-on-write collection), which is how
/// the service takes a consistent snapshot while it keeps applying events. `apply` is
/// deterministic in (state, event, now): it reads no clock and no randomness, so replaying
/// the logged events with their logged `now` rebuilds exactly the same state.
///
/// Duplicates: each source's event ids pass an anti-replay window (`ReplayWindow`). Only
/// ACCEPTED events are recorded in it. A rejected event leaves no trace, so when a gateway
/// re-sends it, it is evaluated again against the state at that time (typically rejected
/// again for the same reason; accepted if, say, its conversation has since been created).
/// A sequence older than the window cannot be told apart: it is rejected as
/// `outsideReplayWindow`, never called a duplicate.
///
/// Choices where SPEC §4 leaves room (each one is tested):
/// - Receipts are per-(conversation, member) watermarks on message sequences plus the log of
///   their advances; a message's counts are kept incrementally, so memory never grows with
///   messages × members.
/// - "Left before reading" means before reading *visibly*: a recipient who leaves or is
///   deleted without a visible read stops counting. Counting private readers would let the
///   recipient count reveal their read.
/// - With no counted recipient left, a message keeps the status it had (nobody read it, and
///   "Delivered" to nobody would be a lie).
/// - A receipt held for a message that has not arrived is applied at its recorded time, but
///   never before the message was sent; a held read is visible only if the user shared
///   reads both when it arrived and when it is applied (privacy fails closed).
/// - Marked-unread is cleared by the user's next accepted read of the conversation, even one
///   that moves no watermark (opening the conversation again).
/// - Deleted messages keep their receipts and stay the sender's "last sent" message, but no
///   longer count as unread.
public struct ReceiptEngine: Sendable {
    /// Placement and bounds.
    public let configuration: EngineConfiguration

    /// Every conversation, by index.
    var conversations: [ConversationState] = []
    /// Their ids, same positions (the id -> index lookup).
    var conversationIDs = IDTable()
    /// Every known user, by index.
    var users: [UserRecord] = []
    /// User id -> index.
    var userTable = UserIndex()
    /// Anti-replay windows by event source.
    var replayWindows = ReplayWindowTable()
    /// The change set `apply` fills, kept between events for its storage.
    var scratchChanges = ChangeSet()
    /// The storage of the last `ApplyResult.changes`, reused when the caller has let go of it
    /// (as it usually has by the next event), so that no event allocates an array.
    var scratchStatuses: [MessageStatus] = []
    /// The storage of the last `ApplyResult.changeKeys`, reused as `scratchStatuses` is.
    var scratchKeys: [UInt64] = []
    /// Whether `apply` reports the read states an event changed (`ApplyResult.readStates`): a
    /// switch, not state (never logged or snapshotted); the service turns it off while nobody
    /// follows a user's topic.
    public var reportsReadStates = true
    /// The (conversation, member slot) pairs whose read state the event changed.
    var scratchReaders = ChangeSet()
    /// The (conversation, member slot, thread) whose read state in a thread the event changed.
    var scratchThreadReaders: [ThreadReader] = []
    /// The storage of the last `ApplyResult.readStates`, reused as `scratchStatuses` is.
    var scratchReadStates: [ReadStateChange] = []
    /// Receipts waiting for their message.
    var pending = PendingReceipts()
    /// Held receipts dropped on expiry (total).
    var droppedPendingReceipts = 0
    /// Held receipts discarded on arrival of their message (total).
    var discardedHeldReceipts = 0
    /// Messages removed by retention (total).
    var expiredMessageTotal = 0
    /// Messages retained now.
    var messageCount = 0
    /// Member slots now.
    var memberSlotCount = 0
    /// The cluster's worker count and the move under way.
    public internal(set) var topology: Topology
    /// Replay windows of the workers conversations were imported from, as they were when
    /// the conversations were frozen there; one table per sender, replaced by its next import.
    var frozenWindows: [FrozenReplayWindows] = []

    /// Creates an empty engine.
    ///
    /// - Parameter configuration: Placement and bounds.
    public init(configuration: EngineConfiguration = .init()) {
        self.configuration = configuration
        topology = Topology(workerCount: configuration.workerCount)
    }

    /// Applies one event at server time `now`.
    ///
    /// Order of checks: event id validity, replay window, kind, ownership, then the rules of the
    /// kind. Held receipts older than `pendingReceiptLifetime` at `now` are dropped first.
    ///
    /// - Parameters:
    ///   - event: The event.
    ///   - now: The server's time; becomes `sentAt` of a message and the time of receipts.
    /// - Returns: The outcome, the statuses that changed with a key per change, and the users'
    ///   read states that changed (while ``reportsReadStates``).
    public mutating func apply(_ event: Event, at now: Timestamp) -> ApplyResult {
        let outcome = replay(event, at: now)
        var result = ApplyResult(outcome: outcome)
        if !scratchChanges.isEmpty {
            // Swapped out: `statuses(of:)` mutates the engine too.
            var changes = ChangeSet()
            swap(&changes, &scratchChanges)
            statuses(of: &changes)
            swap(&changes, &scratchChanges)
            result.changes = scratchStatuses
            result.changeKeys = scratchKeys
        }
        // Empty unless `reportsReadStates` (`readStateChanged` records nothing otherwise).
        if !scratchReaders.isEmpty || !scratchThreadReaders.isEmpty {
            readStates(at: now)
            result.readStates = scratchReadStates
        }
        return result
    }

    /// Applies one event exactly as `apply(_:at:)` does, without building the statuses it changed.
    ///
    /// For log replay at start-up: nobody is subscribed yet, so the statuses (a `MessageStatus`
    /// with its id strings per changed message, about 7% of replay's instructions) would only be
    /// thrown away. The state afterwards is the same as after `apply(_:at:)`.
    ///
    /// - Parameters:
    ///   - event: The event.
    ///   - now: The server's time; becomes `sentAt` of a message and the time of receipts.
    /// - Returns: The outcome.
    public mutating func replay(_ event: Event, at now: Timestamp) -> EventOutcome {
        scratchChanges.removeAll()
        scratchReaders.removeAll()
        scratchThreadReaders.removeAll()
        // Checked here: `expire` is no longer inlined, and nearly every event finds nothing held.
        if pending.count > 0 {
            droppedPendingReceipts += pending.expire(
                now: now.milliseconds,
                lifetime: configuration.pendingReceiptLifetime
            )
        }
        guard !event.id.source.isEmpty, event.id.sequence != 0 else {
            return .rejected(Rejection(.invalidEventID, "an event id needs a non-empty source and a sequence from 1"))
        }
        let window = replayWindows.find(event.id.source)
        if let answer = screen(event.id, at: window) {
            return answer
        }
        var changes = ChangeSet()
        swap(&changes, &scratchChanges)
        let outcome = handle(event, now: now.milliseconds, changes: &changes)
        if case .accepted = outcome {
            replayWindows.record(
                event.id.sequence,
                at: window,
                source: event.id.source,
                size: configuration.duplicateWindow
            )
        }
        swap(&changes, &scratchChanges)
        return outcome
    }

    /// Sizes and totals.
    public var counters: EngineCounters {
        EngineCounters(
            heldReceipts: pending.count,
            droppedPendingReceipts: droppedPendingReceipts,
            discardedHeldReceipts: discardedHeldReceipts,
            conversations: conversations.count,
            messages: messageCount,
            members: memberSlotCount,
            users: users.count,
            eventSources: replayWindows.count,
            expiredMessages: expiredMessageTotal
        )
    }

    /// Removes messages sent before `cutoff` (retention, run at compaction).
    ///
    /// Per conversation the longest prefix sent before the cutoff is dropped. Watermarks,
    /// statuses of retained messages and unread counts stay right; expired messages simply
    /// no longer exist (they stop counting as unread, and receipts naming them are held as
    /// for unknown messages).
    ///
    /// - Parameter cutoff: Messages with `sentAt` before this go.
    /// - Returns: How many messages were removed.
    public mutating func expireMessages(sentBefore cutoff: Timestamp) -> Int {
        var removed = 0
        for c in conversations.indices {
            removed += conversations[c].expire(sentBefore: cutoff.milliseconds)
        }
        messageCount -= removed
        expiredMessageTotal += removed
        return removed
    }

    // MARK: - Shared helpers

    /// The index of a user, creating the record if needed (`hasRoom` checked first).
    mutating func userIndex(creating id: String) -> UInt32 {
        if let index = userIndex(of: id) { return index }
        let index = UInt32(users.count)
        users.reserveGently(1)
        users.append(UserRecord(id: id))
        userTable.didAppend(to: users)
        return index
    }

    /// Whether the user table can take every one of `ids` that is new.
    func hasRoom(forUsers ids: [String]) -> Bool {
        users.count + ids.count <= MemberRecord.userLimit
            || users.count + ids.filter({ userIndex(of: $0) == nil }).count <= MemberRecord.userLimit
    }

    // Lookups used while applying events. They read through field projections of
    // `conversations[c]`: calling a method on `conversations[c]` would copy the whole
    // conversation (a retain per array) for every event, and a copy still alive at the next
    // mutation would make that mutation copy the conversation's arrays.

    @inline(__always)
    func slot(_ c: Int, of user: UInt32) -> UInt32? {
        conversations[c].memberIndex.find(user, in: conversations[c].members)
    }

    /// `mutating` although it only reads: a non-mutating call from a mutating method, when not
    /// inlined, copies the whole engine struct first.
    @inline(__always)
    mutating func sequence(_ c: Int, ofMessage id: String) -> UInt32? {
        // Through the buffer: `conversations[c].messageIDs.position(of:)` copies the table (a
        // retain and a release per array) for the call.
        let position = conversations.withUnsafeBufferPointer { $0[c].messageIDs.position(of: id) }
        return position.map { conversations[c].base + UInt32($0) }
    }

    /// The thread of reply `s` of conversation `c`, or nil for a main-timeline message. Through
    /// the buffer, and `mutating` although it only reads: every receipt asks, and a call on
    /// `conversations[c]` copied the whole conversation (a retain of each of its arrays).
    @inline(__always)
    mutating func threadIndex(_ c: Int, ofReply s: UInt32) -> Int? {
        conversations.withUnsafeBufferPointer { $0[c].threadIndex(ofReply: s) }
    }

    @inline(__always)
    func standing(_ c: Int, of slot: UInt32, at s: UInt32, sender: UInt32) -> ConversationState.Standing {
        conversations.withUnsafeBufferPointer { $0[c].standing(of: slot, at: s, sender: sender) }
    }

    @inline(__always)
    func sentAt(_ c: Int, position p: Int) -> Int64 {
        let stored = conversations[c].messages[p].storedSentAt
        guard stored == MessageRecord.farSentAt else { return stored }
        return conversations.withUnsafeBufferPointer { $0[c].sentAt(position: p) }
    }

    @inline(__always)
    func position(_ c: Int, ofSequence s: UInt32) -> Int? {
        s >= conversations[c].base && s <= conversations[c].lastSequence ? Int(s - conversations[c].base) : nil
    }

    /// The index of a known user.
    @inline(__always)
    func userIndex(of id: String) -> UInt32? {
        userTable.find(id, in: users)
    }

    /// Whether a known user's account is deleted.
    func isDeleted(_ id: String) -> Bool {
        userIndex(of: id).map { users[Int($0)].isDeleted } ?? false
    }

    /// The index of a known conversation.
    @inline(__always)
    func conversationIndex(of id: String) -> UInt32? {
        conversationIDs.position(of: id).map { UInt32($0) }
    }

    /// The conversations in which a user has a member slot, in first-join order.
    func conversations(ofUser u: UInt32) -> [UInt32] {
        var result: [UInt32] = []
        var link = users[Int(u)].lastConversation
        while link != 0, let slot = slot(Int(link) - 1, of: u) {
            result.append(link - 1)
            link = conversations[Int(link) - 1].members[Int(slot)].previousConversation
        }
        return result.reversed()
    }

    /// Records that the read state of a member slot changed (for `ApplyResult.readStates`).
    @inline(__always)
    mutating func readStateChanged(_ c: UInt32, slot: UInt32) {
        guard reportsReadStates else { return }
        scratchReaders.conversation = c
        scratchReaders.add(slot)
    }

    /// Records that the read state of a member slot in thread `t` changed (for
    /// `ApplyResult.readStates`).
    mutating func threadReadStateChanged(_ c: UInt32, slot: UInt32, thread t: Int) {
        guard reportsReadStates else { return }
        scratchThreadReaders.append(ThreadReader(conversation: c, slot: slot, thread: UInt32(t)))
    }

    /// A member slot's own read state (private reads included).
    func readState(_ c: Int, slot: UInt32) -> UnreadCount {
        conversations.withUnsafeBufferPointer { all in
            let member = all[c].members[Int(slot)]
            let unread = all[c].unread(slot: slot)
            return UnreadCount(
                conversation: all[c].id,
                unread: unread.messages,
                isMarkedUnread: member.flags & MemberRecord.Flag.markedUnread != 0,
                readUpTo: UInt64(member.readUpTo),
                hasLeft: !member.isMember,
                unreadMentions: unread.mentions,
                unreadThreads: all[c].threads.isEmpty ? 0 : all[c].unreadThreads(slot: slot)
            )
        }
    }

    /// A member slot's own read state in thread `t` (private reads included).
    func threadReadState(_ c: Int, slot: UInt32, thread t: Int) -> ThreadReadState {
        conversations.withUnsafeBufferPointer { all in
            let own = all[c].threads[t].member(slot)
            let unread = all[c].unreadInThread(t, slot: slot)
            return ThreadReadState(
                conversation: all[c].id,
                thread: all[c].threads[t].rootID,
                unread: unread.replies,
                unreadMentions: unread.mentions,
                readUpTo: UInt64(own?.readUpTo ?? 0),
                isFollowing: own?.follows ?? false,
                hasLeft: !all[c].members[Int(slot)].isMember
            )
        }
    }

    /// Records that a user just got a member slot in a conversation (at most once per slot: a
    /// second link would close the chain into a cycle).
    mutating func link(user u: UInt32, to conversation: UInt32, slot: UInt32) {
        conversations[Int(conversation)].members[Int(slot)].previousConversation = users[Int(u)].lastConversation
        users[Int(u)].lastConversation = conversation + 1
    }
}

extension ReceiptEngine {
    /// Puts the statuses of the changed messages in `scratchStatuses`, one per message, ordered
    /// by conversation then sequence, and their keys in `scratchKeys`.
    mutating func statuses(of changes: inout ChangeSet) {
        changes.sortUnique()
        var result: [MessageStatus] = []
        var keys: [UInt64] = []
        swap(&result, &scratchStatuses)
        swap(&keys, &scratchKeys)
        // The previous statuses are overwritten in place (the array is unique again unless the
        // caller still holds the previous result: then the first write copies it).
        var count = 0
        for i in 0..<changes.count {
            let (c, s) = changes[i]
            guard let p = position(c, ofSequence: s) else { continue }
            let status = messageStatus(conversation: c, position: p)
            if count < result.count {
                result[count] = status
                keys[count] = changes.key(i)
            } else {
                result.append(status)
                keys.append(changes.key(i))
            }
            count += 1
        }
        if count < result.count {
            result.removeLast(result.count - count)
            keys.removeLast(keys.count - count)
        }
        swap(&result, &scratchStatuses)
        swap(&keys, &scratchKeys)
    }

    /// Puts the read states of `scratchReaders` in `scratchReadStates`, one per member slot,
    /// reusing its storage as `statuses(of:)` does.
    mutating func readStates(at now: Timestamp) {
        scratchReaders.sortUnique()
        var result: [ReadStateChange] = []
        swap(&result, &scratchReadStates)
        var count = 0
        for i in 0..<scratchReaders.count {
            let (c, slot) = scratchReaders[i]
            let change = ReadStateChange(
                user: users[Int(conversations[c].members[Int(slot)].user)].id,
                state: readState(c, slot: slot),
                time: now
            )
            if count < result.count { result[count] = change } else { result.append(change) }
            count += 1
        }
        var seen = Set<ThreadReader>()
        for reader in scratchThreadReaders where seen.insert(reader).inserted {
            let (c, slot) = (Int(reader.conversation), reader.slot)
            let change = ReadStateChange(
                user: users[Int(conversations[c].members[Int(slot)].user)].id,
                state: readState(c, slot: slot),
                thread: threadReadState(c, slot: slot, thread: Int(reader.thread)),
                time: now
            )
            if count < result.count { result[count] = change } else { result.append(change) }
            count += 1
        }
        if count < result.count { result.removeLast(result.count - count) }
        swap(&result, &scratchReadStates)
    }
}

/// A member slot whose read state in one thread an event changed.
struct ThreadReader: Hashable, Sendable {
    var conversation: UInt32
    var slot: UInt32
    var thread: UInt32
}
