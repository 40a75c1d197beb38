/// Changing the worker count (deploy/SCALING.md): per conversation, freeze on the sender,
/// import on the receiver (durable before it answers), release on the sender.
///
/// Every step is a pure state change: the service records it in the worker's log before it
/// answers, and replay calls the same methods, so a worker that restarts in the middle of a
/// move knows exactly what it serves. Every step is idempotent, so a driver that repeats one
/// after a crash applies nothing twice.
extension ReceiptEngine {
    /// How this worker answers for a conversation.
    public enum Route: Hashable, Sendable {
        /// It serves the conversation (or would create it).
        case serve
        /// Another worker does: events are rejected `.notOwner`, queries `NOT_OWNER`.
        case notOwner(Int)
        /// It is moving: answered `.moving` / `UNAVAILABLE`, and the client sends it again.
        case moving
    }

    /// How this worker answers for a conversation now.
    /// - Parameter conversation: The conversation id.
    /// - Returns: Whether it serves it, who does, or that it is moving.
    public func route(conversation: String) -> Route {
        route(conversation, index: conversationIndex(of: conversation))
    }

    /// `route(conversation:)` with the conversation's index already looked up.
    ///
    /// An unknown conversation during a move N -> M: its old owner never creates it when it
    /// moves away (so the sender's set of conversations to move only shrinks); its new owner
    /// creates it only once the old owner sent everything it had (before that, the old owner
    /// may still hold it, and it is answered `.moving`).
    func route(_ conversation: String, index c: UInt32?) -> Route {
        let me = configuration.workerIndex
        if let c {
            switch conversations[Int(c)].placement {
            case .owned: return .serve
            case .frozen: return .moving
            case .released: return .notOwner(topology.finalOwner(of: conversation))
            }
        }
        guard let target = topology.targetCount else {
            if topology.workerCount == 1 && me == 0 { return .serve }
            let owner = Partitioning.owner(of: conversation, workerCount: topology.workerCount)
            return owner == me ? .serve : .notOwner(owner)
        }
        let before = Partitioning.owner(of: conversation, workerCount: topology.workerCount)
        let after = Partitioning.owner(of: conversation, workerCount: target)
        let arrived = topology.completedSenders.contains(before)
        if before == me { return after == me ? .serve : .notOwner(after) }
        if after == me { return arrived ? .serve : .moving }
        return .notOwner(arrived ? after : before)
    }

    /// Whether an event for a conversation imported from `sender` was applied there.
    mutating func isDuplicateOfMovedEvent(_ id: EventID, sender: Int) -> Bool {
        guard let t = frozenWindows.firstIndex(where: { $0.sender == sender }) else { return false }
        return frozenWindows[t].isDuplicate(id)
    }

    /// How many held conversations stand where.
    public var moveProgress: MoveProgress {
        var progress = MoveProgress(owned: 0, frozen: 0, released: 0, imported: 0)
        for state in conversations {
            switch state.placement {
            case .owned:
                progress.owned += 1
                if state.importedFrom >= 0 { progress.imported += 1 }
            case .frozen: progress.frozen += 1
            case .released: progress.released += 1
            }
        }
        return progress
    }

    // MARK: - The steps

    /// Records that the cluster goes from `from` to `to` workers under `epoch`.
    ///
    /// A move is known by its epoch: each driver that starts one picks an epoch of its own, so
    /// of two drivers starting a move at once, the first to prepare a worker gets it and the
    /// other is refused there (drivers prepare worker 0 first, so it is refused before it
    /// changes anything); a driver resuming a move repeats its epoch.
    ///
    /// - Throws: `MoveError` `.moveUnderWay` while another move (another epoch or count) is
    ///   not committed, `.staleEpoch` for an epoch not above the last one (unless it is that
    ///   same move again), `.wrongCount` when `from` is not this worker's count or `to` is out
    ///   of range.
    public mutating func prepareMove(epoch: UInt64, from: Int, to: Int) throws(MoveError) {
        if epoch == topology.moveEpoch,
            topology.targetCount == to || (topology.targetCount == nil && topology.workerCount == to)
        {
            return  // the same move again: prepared, or already committed
        }
        if let target = topology.targetCount {
            throw MoveError(
                .moveUnderWay,
                "another move is under way here, to \(target) workers under epoch \(topology.moveEpoch) "
                    + "(another driver runs it, or it waits to be resumed): it must be committed first"
            )
        }
        guard epoch > topology.moveEpoch else {
            throw MoveError(.staleEpoch, "epoch \(epoch) is not above this worker's epoch \(topology.moveEpoch)")
        }
        guard from == topology.workerCount else {
            throw MoveError(.wrongCount, "this worker's count is \(topology.workerCount), not \(from)")
        }
        guard (1..<Partitioning.workerLimit).contains(to), to != from else {
            throw MoveError(.wrongCount, "cannot move from \(from) to \(to) workers")
        }
        topology.moveEpoch = epoch
        topology.targetCount = to
        topology.completedSenders = []
    }

    /// The conversations this worker sends to `destination` next: frozen ones first (an
    /// export whose answer was lost), then owned ones.
    ///
    /// - Parameters:
    ///   - epoch: The move's epoch.
    ///   - destination: The receiving worker.
    ///   - limit: At most this many.
    /// - Returns: Their ids, and how many more go there after them.
    /// - Throws: `MoveError` `.noMove` unless that move is under way.
    public func conversationsToExport(
        epoch: UInt64,
        destination: Int,
        limit: Int
    ) throws(MoveError) -> (ids: [String], remaining: Int) {
        let target = try requireMove(epoch)
        guard destination != configuration.workerIndex, (0..<target).contains(destination) else {
            throw MoveError(.wrongCount, "worker \(destination) receives nothing from this worker in this move")
        }
        var frozen: [String] = []
        var owned: [String] = []
        for state in conversations
        where state.placement != .released && Partitioning.owner(of: state.id, workerCount: target) == destination {
            if state.placement == .frozen { frozen.append(state.id) } else { owned.append(state.id) }
        }
        let all = frozen + owned
        let ids = Array(all.prefix(max(limit, 0)))
        return (ids, all.count - ids.count)
    }

    /// Freezes conversations for their export to `destination`: from now on nobody serves
    /// them until they are released.
    /// - Throws: `MoveError` `.noMove` unless that move is under way, `.conflict` for a
    ///   conversation that does not move to `destination`.
    public mutating func freeze(_ ids: [String], epoch: UInt64, to destination: Int) throws(MoveError) {
        try requireMove(epoch, allGoTo: destination, ids)
        for id in ids {
            guard let c = conversationIndex(of: id), conversations[Int(c)].placement == .owned else { continue }
            conversations[Int(c)].placement = .frozen
        }
    }

    /// The export of some held conversations: their state, the users they name, their held
    /// receipts and this worker's replay windows.
    /// - Parameter ids: The conversations (unknown ones are left out).
    /// - Returns: Bytes for ``ExportedConversations/init(_:)`` on the receiver.
    public func exportedState(of ids: [String]) -> [UInt8] {
        let indices = ids.compactMap { conversationIndex(of: $0).map(Int.init) }.sorted()
        return encodedState(selecting: indices, forExport: true)
    }

    /// Makes exported conversations this worker's own. Conversations it already got from the
    /// same sender are left alone (a repeated import).
    ///
    /// Users it knows already keep their record, except that a deletion on either side
    /// stands and reads are shared only if both sides say so (privacy fails closed). A deleted
    /// user who is still a member of an imported conversation (the deletion reached one side
    /// only before the freeze) leaves it at `now`, as the deletion would have made them.
    ///
    /// - Parameters:
    ///   - export: The sender's export.
    ///   - epoch: The move's epoch.
    ///   - sender: The worker that exported them.
    ///   - last: The sender has nothing more for this worker: from now on this worker creates
    ///     the conversations that move from it.
    ///   - now: The server time (the frozen replay windows count their lifetime from it).
    /// - Returns: How many became this worker's, and how many it held already.
    /// - Throws: `MoveError` (and changes nothing) if that move is not under way, or a
    ///   conversation does not move here or is held here from elsewhere.
    public mutating func importConversations(
        _ export: ExportedConversations,
        epoch: UInt64,
        from sender: Int,
        last: Bool,
        at now: Timestamp
    ) throws(MoveError) -> (imported: Int, alreadyHeld: Int) {
        let target = try requireMove(epoch)
        let me = configuration.workerIndex
        guard sender != me, (0..<max(topology.workerCount, target)).contains(sender) else {
            throw MoveError(.wrongCount, "worker \(sender) sends nothing to this worker in this move")
        }
        let sub = export.engine
        var replacesReleased = false
        for state in sub.conversations {
            guard Partitioning.owner(of: state.id, workerCount: target) == me else {
                throw MoveError(.conflict, "conversation \(state.id) does not move to worker \(me)")
            }
            guard let c = conversationIndex(of: state.id) else { continue }
            if conversations[Int(c)].placement == .released {
                replacesReleased = true
            } else if conversations[Int(c)].importedFrom != Int32(sender) {
                throw MoveError(.conflict, "conversation \(state.id) is held here, not from worker \(sender)")
            }
        }
        guard hasRoom(forUsers: sub.users.map(\.id)) else {
            throw MoveError(.conflict, "the user table has no room for the export's users")
        }
        // It left this worker in an earlier move and comes back: its old state goes first.
        if replacesReleased { try dropReleased() }

        var userMap: [UInt32] = []
        userMap.reserveCapacity(sub.users.count)
        for user in sub.users {
            let known = userIndex(of: user.id) != nil
            let u = userIndex(creating: user.id)
            users[Int(u)].isDeleted = users[Int(u)].isDeleted || user.isDeleted
            users[Int(u)].sharesReads = (known ? users[Int(u)].sharesReads : true) && user.sharesReads
            userMap.append(u)
        }
        var newIndex = [UInt32?](repeating: nil, count: sub.conversations.count)
        var imported = 0
        for (sc, original) in sub.conversations.enumerated() where conversationIndex(of: original.id) == nil {
            var state = original
            for slot in state.members.indices {
                state.members[slot].user = userMap[Int(state.members[slot].user)]
                state.members[slot].previousConversation = 0
            }
            state.memberIndex.rebuild(state.members)
            state.placement = .owned
            state.importedFrom = Int32(sender)
            let c = UInt32(conversations.count)
            conversations.reserveGently(1)
            conversations.append(state)
            conversationIDs.append(state.id)
            messageCount += state.messages.count
            memberSlotCount += state.members.count
            var changes = ChangeSet()
            for slot in state.members.indices {
                let user = state.members[slot].user
                link(user: user, to: c, slot: UInt32(slot))
                if users[Int(user)].isDeleted, state.members[slot].isMember {
                    conversations[Int(c)].leave(
                        slot: UInt32(slot),
                        byDeletion: true,
                        time: now.milliseconds,
                        changes: &changes
                    )
                }
            }
            newIndex[sc] = c
            imported += 1
        }
        for var receipt in sub.pending.receiptsInOrder {
            guard let c = newIndex[Int(receipt.conversation)] else { continue }
            receipt.conversation = c
            pending.hold(receipt)
        }
        if !sub.conversations.isEmpty {
            let frozen = FrozenReplayWindows(sender: sender, windows: sub.replayWindows)
            if let t = frozenWindows.firstIndex(where: { $0.sender == sender }) {
                frozenWindows[t] = frozen
            } else {
                frozenWindows.append(frozen)
            }
        }
        if last { topology.completedSenders.insert(sender) }
        return (imported, sub.conversations.count - imported)
    }

    /// Gives frozen conversations up: their receiver has them durably.
    /// - Returns: How many were released now (a repeat releases none).
    /// - Throws: `MoveError` `.noMove` unless that move is under way.
    @discardableResult
    public mutating func release(_ ids: [String], epoch: UInt64, to destination: Int) throws(MoveError) -> Int {
        try requireMove(epoch, allGoTo: destination, ids)
        var released = 0
        for id in ids {
            guard let c = conversationIndex(of: id), conversations[Int(c)].placement == .frozen else { continue }
            conversations[Int(c)].placement = .released
            released += 1
        }
        return released
    }

    /// Ends the move: the target count becomes the worker count, and the released
    /// conversations' state goes.
    /// - Throws: `MoveError` `.noMove` unless that move is under way (or committed: a repeat
    ///   does nothing), `.moveUnderWay` while this worker still holds a conversation that
    ///   moves away (frozen or not), or, as a receiver, has not heard `last` from every
    ///   sender: a commit then would leave a conversation with two owners or none.
    public mutating func commitMove(epoch: UInt64) throws(MoveError) {
        if epoch == topology.moveEpoch, topology.targetCount == nil { return }
        let target = try requireMove(epoch)
        let me = configuration.workerIndex
        let leaving = conversations.reduce(0) { count, state in
            state.placement != .released && Partitioning.owner(of: state.id, workerCount: target) != me
                ? count + 1 : count
        }
        guard leaving == 0 else {
            throw MoveError(.moveUnderWay, "\(leaving) conversations held here still move to other workers")
        }
        let from = topology.workerCount
        // Going up, a new worker hears `last` from every old one; going down, a survivor from
        // every leaving one; any other worker receives nothing.
        let senders =
            target > from ? (me >= from && me < target ? 0..<from : 0..<0) : (me < target ? target..<from : 0..<0)
        let missing = senders.filter { !topology.completedSenders.contains($0) }
        guard missing.isEmpty else {
            throw MoveError(.moveUnderWay, "the conversations of workers \(missing) have not all arrived here")
        }
        // First, so that nothing is changed if the rebuild fails.
        try dropReleased()
        topology.workerCount = target
        topology.targetCount = nil
        topology.completedSenders = []
    }

    /// Checks that the move under `epoch` is under way and sends every one of `ids` to
    /// `destination`.
    private func requireMove(_ epoch: UInt64, allGoTo destination: Int, _ ids: [String]) throws(MoveError) {
        let target = try requireMove(epoch)
        if let wrong = ids.first(where: { Partitioning.owner(of: $0, workerCount: target) != destination }) {
            throw MoveError(.conflict, "conversation \(wrong) does not move to worker \(destination)")
        }
    }

    /// The target count of the move under `epoch`.
    private func requireMove(_ epoch: UInt64) throws(MoveError) -> Int {
        guard epoch == topology.moveEpoch, let target = topology.targetCount else {
            throw MoveError(.noMove, "no move under epoch \(epoch) is under way here (epoch \(topology.moveEpoch))")
        }
        return target
    }

    /// Forgets the released conversations: the engine is rebuilt from a snapshot of the rest
    /// (their indices are woven through users and held receipts).
    /// - Throws: `MoveError` `.invalidState` if the engine's own snapshot does not decode (a
    ///   bug: the engine is left as it was, and the step is refused rather than half done).
    mutating func dropReleased() throws(MoveError) {
        let kept = conversations.indices.filter { conversations[$0].placement != .released }
        guard kept.count < conversations.count else { return }
        do {
            self = try ReceiptEngine(
                restoringFrom: encodedState(selecting: kept, forExport: false),
                configuration: configuration
            )
        } catch {
            throw MoveError(
                .invalidState,
                "the engine's snapshot without its released conversations does not decode: \(error)"
            )
        }
    }
}
