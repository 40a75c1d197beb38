/// The snapshot payload: a compact, versioned binary image of the whole state.
///
/// Layout (all integers little-endian): magic `RCPTENG\0`, `UInt16` format version, then the
/// totals, users, conversations (flat arrays of fixed-size records), anti-replay windows and
/// held receipts, then (from version 3) the topology, the conversations not simply owned, and
/// the frozen replay windows of moves, then a 64-bit checksum of everything before it. Written by hand because the
/// restart target is >= 5,000,000 receipts/s; every count, index and watermark is validated
/// on the way in so that no byte sequence can crash the decoder or the engine afterwards.
extension ReceiptEngine {
    static let snapshotMagic: [UInt8] = Array("RCPTENG\0".utf8)
    /// 2: a message has no recipient count, only `MessageRecord.Flag.hasRecipients` in its flags.
    /// 3: the topology, placements and frozen replay windows of worker count changes follow the
    /// held receipts. Version 2 is still read (placement then follows the configured count).
    /// 4: each conversation's named mentions follow its former memberships, and a message's
    /// flags may say it mentions everyone. Versions 2 and 3 are still read (no mentions).
    /// 5: each conversation's threads follow its mentions, and a message's flags may say it is a
    /// thread reply. Versions 2 to 4 are still read (no threads).
    /// 6: a held receipt ends with the root sequence of the thread it named (0 for none).
    /// Versions 2 to 5 are still read (held receipts name no thread).
    static let snapshotVersion: UInt16 = 6
    /// The oldest version this build reads.
    static let oldestReadableSnapshotVersion: UInt16 = 2
    /// An absent time in the snapshot.
    static let noTime = Int64.min

    /// Encodes the whole state for a snapshot.
    ///
    /// - Returns: The payload; `init(restoringFrom:configuration:)` reads it back.
    public func encodedState() -> [UInt8] {
        encodedState(selecting: nil, forExport: false)
    }

    /// The whole state as a snapshot of an earlier `version` (2 or later) writes it, leaving
    /// out what that version did not have: for tests that restore older snapshots.
    package func encodedState(version: UInt16) -> [UInt8] {
        encodedState(selecting: nil, forExport: false, version: version)
    }

    /// Encodes the state of some conversations only, renumbered in the order given.
    ///
    /// - Parameters:
    ///   - selection: Conversation indices, ascending; nil for every conversation.
    ///   - forExport: A move's export: only the users the conversations name, no totals, and
    ///     every conversation written as simply owned (the receiver's placement, not ours).
    ///   - version: The format; an earlier one leaves out threads (before 5), mentions (before
    ///     4) and the placement trailer (before 3).
    /// - Returns: A snapshot payload that `init(restoringFrom:configuration:)` reads.
    func encodedState(selecting selection: [Int]?, forExport: Bool, version: UInt16 = snapshotVersion) -> [UInt8] {
        let picked = selection ?? Array(conversations.indices)
        var newConversation = [Int32](repeating: -1, count: conversations.count)
        for (n, c) in picked.enumerated() { newConversation[c] = Int32(n) }
        let pickedUsers: [Int]
        if forExport {
            var named = Set<UInt32>()
            for c in picked { for m in conversations[c].members { named.insert(m.user) } }
            pickedUsers = named.map(Int.init).sorted()
        } else {
            pickedUsers = Array(users.indices)
        }
        var newUser = [UInt32](repeating: 0, count: users.count)
        for (n, u) in pickedUsers.enumerated() { newUser[u] = UInt32(n) }

        var w = SnapshotWriter(capacity: 64 + messageCount * 56 + memberSlotCount * 40)
        for byte in Self.snapshotMagic { w.write(byte) }
        w.write(version)
        w.write(UInt64(forExport ? 0 : droppedPendingReceipts))
        w.write(UInt64(forExport ? 0 : discardedHeldReceipts))
        w.write(UInt64(forExport ? 0 : expiredMessageTotal))

        w.write(UInt32(pickedUsers.count))
        for u in pickedUsers {
            let user = users[u]
            w.write(user.id)
            w.write(user.isDeleted)
            w.write(user.sharesReads)
            w.write(
                conversations(ofUser: UInt32(u)).compactMap { c in
                    newConversation[Int(c)] >= 0 ? UInt32(newConversation[Int(c)]) : nil
                }
            )
        }

        w.write(UInt32(picked.count))
        for state in picked.lazy.map({ conversations[$0] }) {
            w.write(state.id)
            w.write(state.kind.rawValue)
            w.write(state.base)
            w.write(state.lastSequence)
            w.write(UInt32(state.messages.count))
            for (p, m) in state.messages.enumerated() {
                w.write(state.sentAt(position: p))
                w.write(state.time(position: p, isRead: false) ?? Self.noTime)
                w.write(state.time(position: p, isRead: true) ?? Self.noTime)
                w.write(m.sender)
                w.write(m.counted)
                w.write(m.deliveredCount)
                w.write(m.readCount)
                w.write(
                    m.flags & ~(version >= 4 ? 0 : MessageRecord.Flag.mentionsEveryone)
                        & ~(version >= 5 ? 0 : MessageRecord.Flag.threadReply)
                )
                w.write(m.status)
            }
            w.write(bytes: state.messageIDs.bytes)
            w.write(state.messageIDs.ends)
            w.write(UInt32(state.members.count))
            for m in state.members {
                w.write(newUser[Int(m.user)])
                w.write(m.joinedAfter)
                w.write(m.deliveredUpTo)
                w.write(m.readUpTo)
                w.write(m.visibleReadUpTo)
                w.write(m.lastNormalSent)
                w.write(m.deliveredHead)
                w.write(m.visibleHead)
                w.write(m.flags)
            }
            w.write(UInt32(state.advances.count))
            for a in state.advances {
                w.write(a.upTo)
                w.write(a.previous)
                w.write(a.time)
            }
            w.write(UInt32(state.formerMemberships.count))
            for f in state.formerMemberships {
                w.write(f.member)
                w.write(f.joinedAfter)
                w.write(f.leftAfter)
                w.write(f.deliveredUpTo)
                w.write(f.visibleReadUpTo)
                w.write(f.byDeletion)
            }
            if version >= 4 {
                w.write(UInt32(state.mentions.count))
                for mention in state.mentions {
                    w.write(mention.sequence)
                    w.write(mention.member)
                }
            }
            if version >= 5 { Self.write(state.threads, to: &w) }
        }

        Self.write(replayWindows, to: &w)

        let held = pending.receiptsInOrder.filter { newConversation[Int($0.conversation)] >= 0 }
        w.write(pending.nextSerial)
        w.write(UInt32(held.count))
        for r in held {
            w.write(r.serial)
            w.write(UInt32(newConversation[Int(r.conversation)]))
            w.write(r.message)
            w.write(r.user)
            w.write(r.kind)
            w.write(r.time)
            w.write(r.heldAt)
            if version >= 6 { w.write(r.thread) }
        }

        guard version >= 3 else {
            w.seal()
            return w.bytes
        }
        w.write(topology.moveEpoch)
        w.write(UInt32(topology.workerCount))
        w.write(UInt32(topology.targetCount ?? 0))
        w.write(topology.completedSenders.sorted().map { UInt32($0) })
        let placed =
            forExport
            ? [] : picked.filter { conversations[$0].placement != .owned || conversations[$0].importedFrom >= 0 }
        w.write(UInt32(placed.count))
        for c in placed {
            w.write(UInt32(newConversation[c]))
            w.write(conversations[c].placement.rawValue)
            w.write(conversations[c].importedFrom)
        }
        let frozen = forExport ? [] : frozenWindows
        w.write(UInt32(frozen.count))
        for table in frozen {
            w.write(UInt32(table.sender))
            Self.write(table.windows, to: &w)
        }
        w.seal()
        return w.bytes
    }

    /// Writes a conversation's threads (version 5).
    private static func write(_ threads: [ThreadState], to w: inout SnapshotWriter) {
        w.write(UInt32(threads.count))
        for thread in threads {
            w.write(thread.rootID)
            w.write(thread.root)
            w.write(thread.replies)
            w.write(UInt32(thread.members.count))
            for member in thread.members {
                w.write(member.slot)
                w.write(member.deliveredUpTo)
                w.write(member.readUpTo)
                w.write(member.visibleReadUpTo)
                w.write(member.deliveredHead)
                w.write(member.visibleHead)
                w.write(member.flags)
                w.write(UInt32(member.frozen.count))
                for frozen in member.frozen {
                    w.write(frozen.leftAfter)
                    w.write(frozen.deliveredUpTo)
                    w.write(frozen.visibleReadUpTo)
                }
            }
        }
    }

    /// Writes replay windows in source order (so equal states give equal bytes).
    private static func write(_ table: ReplayWindowTable, to w: inout SnapshotWriter) {
        let sources = table.sources.indices.sorted { table.sources[$0] < table.sources[$1] }
        w.write(UInt32(sources.count))
        for position in sources {
            let window = table.windows[position]
            w.write(table.sources[position])
            w.write(window.highest)
            w.write(UInt32(window.bits.count))
            for word in window.bits { w.write(word) }
        }
    }

    /// Reads replay windows written by `write(_:to:)`.
    private static func readWindows(_ r: inout SnapshotReader) throws(SnapshotDecodingError) -> ReplayWindowTable {
        var table = ReplayWindowTable()
        let sourceCount = try r.readCount(itemSize: SnapshotItemSize.replayWindow)
        for _ in 0..<sourceCount {
            let source = try r.readString()
            let highest = try r.read(UInt64.self)
            let words = try r.readCount(itemSize: SnapshotItemSize.replayWindowWord)
            guard words >= 1, words <= 1 << 20 else { throw r.corrupt("a replay window of \(words) words") }
            var bits: [UInt64] = []
            bits.reserveCapacity(words)
            for _ in 0..<words { bits.append(try r.read(UInt64.self)) }
            guard table.find(source) == nil else { throw r.corrupt("event source \(source) appears twice") }
            table.add(source, ReplayWindow(highest: highest, bits: bits))
        }
        return table
    }

    /// A snapshot payload made of a valid header (of `version`), `body` and a valid checksum:
    /// lets a fuzzer reach the decoder's checks behind the checksum, and tests make snapshots
    /// of earlier versions.
    package static func sealedSnapshot(body: some Sequence<UInt8>, version: UInt16 = snapshotVersion) -> [UInt8] {
        var w = SnapshotWriter(capacity: 64)
        for byte in snapshotMagic { w.write(byte) }
        w.write(version)
        for byte in body { w.write(byte) }
        w.seal()
        return w.bytes
    }

    /// The ids of every conversation and user held, for tools that walk a restored state.
    package var heldIDs: (conversations: [String], users: [String]) {
        (conversations.map(\.id), users.map(\.id))
    }

    /// Restores an engine from `encodedState()` bytes.
    ///
    /// - Parameters:
    ///   - bytes: The snapshot payload.
    ///   - configuration: Placement and bounds for the restored engine (not part of the snapshot).
    /// - Throws: `SnapshotDecodingError` for anything but a complete, intact snapshot of a
    ///   version this build reads; never crashes.
    public init(restoringFrom bytes: [UInt8], configuration: EngineConfiguration) throws(SnapshotDecodingError) {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(SnapshotDecodingError) in
                try ReceiptEngine(restoringFrom: raw, configuration: configuration)
            }
        }
        self = try result.get()
    }

    /// Restores an engine from `encodedState()` bytes anywhere in memory, such as a mapping of
    /// the snapshot file (no copy of the payload is made).
    ///
    /// - Parameters:
    ///   - bytes: The snapshot payload; only read during the call.
    ///   - configuration: Placement and bounds for the restored engine (not part of the snapshot).
    /// - Throws: `SnapshotDecodingError` for anything but a complete, intact snapshot of a
    ///   version this build reads; never crashes.
    public init(
        restoringFrom bytes: UnsafeRawBufferPointer,
        configuration: EngineConfiguration
    )
        throws(SnapshotDecodingError)
    {
        let magic = Self.snapshotMagic
        guard bytes.count >= magic.count, bytes.prefix(magic.count).elementsEqual(magic) else {
            throw SnapshotDecodingError(.badMagic, "the bytes do not start with the receipt engine snapshot magic")
        }
        guard bytes.count >= magic.count + 2 + 8 else {
            throw SnapshotDecodingError(.truncated, "the snapshot is \(bytes.count) bytes, too short for its header")
        }
        let version = UInt16(bytes[magic.count]) | UInt16(bytes[magic.count + 1]) << 8
        guard (Self.oldestReadableSnapshotVersion...Self.snapshotVersion).contains(version) else {
            throw SnapshotDecodingError(
                .unsupportedVersion,
                "snapshot format version \(version); this build reads versions "
                    + "\(Self.oldestReadableSnapshotVersion) to \(Self.snapshotVersion)"
            )
        }
        let body = UnsafeRawBufferPointer(rebasing: bytes[0..<bytes.count - 8])
        let stored = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: bytes.count - 8, as: UInt64.self))
        guard SnapshotWriter.checksum(body) == stored else {
            throw SnapshotDecodingError(.corrupt, "the snapshot checksum does not match: torn or damaged bytes")
        }
        var reader = SnapshotReader(body)
        for _ in 0..<magic.count + 2 { _ = try reader.read(UInt8.self) }
        self.init(configuration: configuration)
        try self.decode(&reader, version: version)
        guard reader.remaining == 0 else {
            throw reader.corrupt("\(reader.remaining) unexpected bytes after the state")
        }
    }

    private mutating func decode(_ r: inout SnapshotReader, version: UInt16) throws(SnapshotDecodingError) {
        // Totals only ever grow by one at a time: anything near the top of the range is damage
        // (and would trap when incremented).
        let totals = [try r.read(UInt64.self), try r.read(UInt64.self), try r.read(UInt64.self)]
        guard totals.allSatisfy({ $0 < 1 << 62 }) else { throw r.corrupt("a total is out of range") }
        droppedPendingReceipts = Int(totals[0])
        discardedHeldReceipts = Int(totals[1])
        expiredMessageTotal = Int(totals[2])

        let userCount = try r.readCount(itemSize: SnapshotItemSize.user)
        guard userCount <= MemberRecord.userLimit else { throw r.corrupt("\(userCount) users") }
        users.reserveCapacity(userCount)
        // Every user's conversation list in one flat array, `listEnds[u]` the end of user u's:
        // an array per user cost an allocation and a free per user.
        var listed: [UInt32] = []
        var listEnds: [Int] = []
        listEnds.reserveCapacity(userCount)
        for _ in 0..<userCount {
            let id = try r.readString()
            let isDeleted = try r.readBool()
            let sharesReads = try r.readBool()
            try r.appendUInt32s(to: &listed)
            listEnds.append(listed.count)
            users.append(UserRecord(id: id, isDeleted: isDeleted, sharesReads: sharesReads))
        }
        userTable.rebuild(users)
        for (u, user) in users.enumerated() where userIndex(of: user.id) != UInt32(u) {
            throw r.corrupt("user \(user.id) appears twice")
        }

        let conversationCount = try r.readCount(itemSize: SnapshotItemSize.conversation)
        conversations.reserveCapacity(conversationCount)
        for _ in 0..<conversationCount {
            var state = try decodeConversation(&r, version: version)
            if version < 3, configuration.workerCount > 1,
                Partitioning.owner(of: state.id, workerCount: configuration.workerCount) != configuration.workerIndex
            {
                // Taken before placements were recorded, under another worker count.
                state.placement = .released
            }
            guard conversationIndex(of: state.id) == nil else {
                throw r.corrupt("conversation \(state.id) appears twice")
            }
            messageCount += state.messages.count
            memberSlotCount += state.members.count
            conversationIDs.append(state.id)
            // The last use of `state`: moved into the array, not copied.
            conversations.append(state)
        }
        // Each slot is linked once: listing a conversation twice would chain it to itself.
        // `listedBy[c]` is the last user that listed conversation c, which finds a repeat
        // within one user's list without a `Set` per user.
        var listedBy = [UInt32](repeating: UInt32.max, count: conversations.count)
        var listStart = 0
        for u in 0..<userCount {
            for c in listed[listStart..<listEnds[u]] {
                guard Int(c) < conversations.count, listedBy[Int(c)] != UInt32(u) else {
                    throw r.corrupt("user \(users[u].id) lists a conversation twice or one out of range")
                }
                listedBy[Int(c)] = UInt32(u)
                guard let slot = conversations[Int(c)].slot(of: UInt32(u)) else {
                    throw r.corrupt("user \(users[u].id) lists a conversation without a member slot for them")
                }
                link(user: UInt32(u), to: c, slot: slot)
            }
            listStart = listEnds[u]
        }

        replayWindows = try Self.readWindows(&r)

        let nextSerial = try r.read(UInt64.self)
        guard nextSerial < 1 << 62 else { throw r.corrupt("the next held-receipt serial is out of range") }
        let heldCount = try r.readCount(itemSize: SnapshotItemSize.heldReceipt)
        var held: [PendingReceipts.Receipt] = []
        held.reserveCapacity(heldCount)
        var lastSerial: UInt64 = 0
        for _ in 0..<heldCount {
            let serial = try r.read(UInt64.self)
            let conversation = try r.read(UInt32.self)
            let message = try r.readString()
            let user = try r.readString()
            let kind = try r.read(UInt8.self)
            let time = try r.read(Int64.self)
            let heldAt = try r.read(Int64.self)
            let thread = version >= 6 ? try r.read(UInt32.self) : 0
            guard serial > lastSerial, serial < nextSerial, Int(conversation) < conversations.count,
                PendingReceipts.Kind(rawValue: kind) != nil, thread <= conversations[Int(conversation)].lastSequence
            else { throw r.corrupt("a held receipt is inconsistent") }
            lastSerial = serial
            held.append(
                PendingReceipts.Receipt(
                    serial: serial,
                    conversation: conversation,
                    message: message,
                    user: user,
                    kind: kind,
                    time: time,
                    heldAt: heldAt,
                    thread: thread
                )
            )
        }
        pending = PendingReceipts(receipts: held, nextSerial: max(nextSerial, 1))
        if version >= 3 { try decodePlacement(&r) }
    }

    /// The version 3 trailer: topology, placements, frozen replay windows.
    private mutating func decodePlacement(_ r: inout SnapshotReader) throws(SnapshotDecodingError) {
        let moveEpoch = try r.read(UInt64.self)
        let workerCount = try r.read(UInt32.self)
        let targetCount = try r.read(UInt32.self)
        let completed = try r.readUInt32s()
        let limit = UInt32(Partitioning.workerLimit)
        guard (1...limit).contains(workerCount), targetCount <= limit, completed.allSatisfy({ $0 < limit }),
            moveEpoch < 1 << 62
        else { throw r.corrupt("the topology is out of range") }
        topology = Topology(workerCount: Int(workerCount))
        topology.moveEpoch = moveEpoch
        topology.targetCount = targetCount == 0 ? nil : Int(targetCount)
        topology.completedSenders = Set(completed.map(Int.init))
        let placedCount = try r.readCount(itemSize: SnapshotItemSize.placement)
        for _ in 0..<placedCount {
            let c = try r.read(UInt32.self)
            let placement = Placement(rawValue: try r.read(UInt8.self))
            let importedFrom = try r.read(Int32.self)
            guard Int(c) < conversations.count, let placement, importedFrom >= -1, importedFrom < Int32(limit) else {
                throw r.corrupt("a conversation's placement is inconsistent")
            }
            conversations[Int(c)].placement = placement
            conversations[Int(c)].importedFrom = importedFrom
        }
        let frozenCount = try r.readCount(itemSize: SnapshotItemSize.frozenWindows)
        for _ in 0..<frozenCount {
            let sender = try r.read(UInt32.self)
            let windows = try Self.readWindows(&r)
            guard sender < limit, !frozenWindows.contains(where: { $0.sender == Int(sender) }) else {
                throw r.corrupt("frozen replay windows of worker \(sender) are inconsistent")
            }
            frozenWindows.append(FrozenReplayWindows(sender: Int(sender), windows: windows))
        }
    }

    private func decodeConversation(
        _ r: inout SnapshotReader,
        version: UInt16
    ) throws(SnapshotDecodingError) -> ConversationState {
        let id = try r.readString()
        guard let kind = ConversationKind(rawValue: try r.read(UInt8.self)) else {
            throw r.corrupt("conversation \(id) has an unknown kind")
        }
        var state = ConversationState(id: id, kind: kind)
        state.base = try r.read(UInt32.self)
        state.lastSequence = try r.read(UInt32.self)
        let messageCount = try r.readCount(itemSize: SnapshotItemSize.message)
        guard state.base >= 1, state.lastSequence <= ConversationState.sequenceLimit,
            UInt64(state.base) + UInt64(messageCount) == UInt64(state.lastSequence) + 1
        else {
            throw r.corrupt(
                "conversation \(id) holds \(messageCount) messages from \(state.base) to \(state.lastSequence)"
            )
        }
        state.messages.reserveCapacity(messageCount)
        for p in 0..<messageCount {
            let sentAt: Int64 = try r.read()
            let deliveredAt: Int64 = try r.read()
            let readAt: Int64 = try r.read()
            let message = MessageRecord(
                sentAt: sentAt,
                sender: try r.read(),
                counted: try r.read(),
                deliveredCount: try r.read(),
                readCount: try r.read(),
                flags: try r.read(),
                status: try r.read()
            )
            let systemMentioning = MessageRecord.Flag.system | MessageRecord.Flag.mentionsEveryone
            guard message.flags & ~MessageRecord.Flag.all == 0,
                message.flags & systemMentioning != systemMentioning,
                message.flags & MessageRecord.Flag.hasRecipients != 0 || message.counted == 0,
                message.deliveredCount <= message.counted,
                message.readCount <= message.deliveredCount, message.status <= ReceiptStatus.readByAll.rawValue,
                deliveredAt == Self.noTime || deliveredAt >= sentAt, readAt == Self.noTime || readAt >= sentAt
            else { throw r.corrupt("a message of conversation \(id) has inconsistent counts or times") }
            state.messages.append(message)
            if !MessageRecord.fitsInline(sentAt) {
                state.farTimes[ConversationState.farKey(state.base + UInt32(p), 2)] = sentAt
            }
            if deliveredAt != Self.noTime { state.setTime(deliveredAt, position: p, isRead: false) }
            if readAt != Self.noTime { state.setTime(readAt, position: p, isRead: true) }
        }
        let idBytes = try r.readBytes()
        let ends = try r.readUInt32s()
        guard ends.count == messageCount, ends.last.map({ Int($0) == idBytes.count }) ?? idBytes.isEmpty,
            zip(ends, ends.dropFirst()).allSatisfy({ $0 <= $1 })
        else { throw r.corrupt("the message ids of conversation \(id) are inconsistent") }
        state.messageIDs = IDTable(bytes: idBytes, ends: ends)

        let memberCount = try r.readCount(itemSize: SnapshotItemSize.member)
        state.members.reserveCapacity(memberCount)
        for _ in 0..<memberCount {
            let user: UInt32 = try r.read()
            let joinedAfter: UInt32 = try r.read()
            let deliveredUpTo: UInt32 = try r.read()
            let readUpTo: UInt32 = try r.read()
            let visibleReadUpTo: UInt32 = try r.read()
            let lastNormalSent: UInt32 = try r.read()
            let deliveredHead: UInt32 = try r.read()
            let visibleHead: UInt32 = try r.read()
            let flags: UInt8 = try r.read()
            guard flags & ~MemberRecord.Flag.all == 0, Int(user) < users.count else {
                throw r.corrupt("a member of conversation \(id) is inconsistent")
            }
            let member = MemberRecord(
                user: user,
                joinedAfter: joinedAfter,
                deliveredUpTo: deliveredUpTo,
                readUpTo: readUpTo,
                visibleReadUpTo: visibleReadUpTo,
                lastNormalSent: lastNormalSent,
                deliveredHead: deliveredHead,
                visibleHead: visibleHead,
                flags: flags
            )
            // Compared one by one: the variadic `max` of five values allocated an array per member.
            let last = state.lastSequence
            guard member.joinedAfter <= last, member.deliveredUpTo <= last, member.readUpTo <= last,
                member.visibleReadUpTo <= last, member.lastNormalSent <= last, state.slot(of: member.user) == nil
            else { throw r.corrupt("a member of conversation \(id) is inconsistent") }
            if member.isMember { state.memberCount += 1 }
            state.members.append(member)
            state.memberIndex.didAppend(to: state.members)
        }
        for message in state.messages where Int(message.sender) >= memberCount {
            throw r.corrupt("a message of conversation \(id) has an unknown sender")
        }

        let advanceCount = try r.readCount(itemSize: SnapshotItemSize.advance)
        state.advances.reserveCapacity(advanceCount)
        for i in 0..<advanceCount {
            let advance = ReceiptAdvance(upTo: try r.read(), previous: try r.read(), time: try r.read())
            guard Int(advance.previous) <= i, advance.upTo <= state.lastSequence else {
                throw r.corrupt("a receipt advance of conversation \(id) is inconsistent")
            }
            state.advances.append(advance)
        }
        for member in state.members
        where Int(member.deliveredHead) > advanceCount || Int(member.visibleHead) > advanceCount {
            throw r.corrupt("a member of conversation \(id) points past the receipt advances")
        }

        let formerCount = try r.readCount(itemSize: SnapshotItemSize.formerMembership)
        for _ in 0..<formerCount {
            let former = FormerMembership(
                member: try r.read(),
                joinedAfter: try r.read(),
                leftAfter: try r.read(),
                deliveredUpTo: try r.read(),
                visibleReadUpTo: try r.read(),
                byDeletion: try r.readBool()
            )
            guard Int(former.member) < memberCount, former.joinedAfter <= former.leftAfter,
                former.leftAfter <= state.lastSequence,
                state.members[Int(former.member)].flags & MemberRecord.Flag.hasFormerMemberships != 0
            else { throw r.corrupt("a former membership of conversation \(id) is inconsistent") }
            state.formerMemberships.append(former)
        }
        if version >= 4 { state.mentions = try decodeMentions(&r, of: state) }
        if version >= 5 {
            state.threads = try decodeThreads(&r, of: state)
            state.rebuildThreadIndexes()
        }
        let replies = state.messages.count { $0.flags & MessageRecord.Flag.threadReply != 0 }
        guard replies == state.threadOfReply.count, state.threadOfRoot.count == state.threads.count,
            state.threads.reduce(0, { $0 + $1.replies.count }) == replies,
            state.threads.allSatisfy({ state.threadOfReply[$0.root] == nil })
        else {
            throw r.corrupt("the threads of conversation \(id) do not match its replies")
        }
        return state
    }

    /// A conversation's threads (version 5): each reply a retained thread reply after its root,
    /// in order, in one thread; each member a slot of the conversation, once, with watermarks
    /// and chains that exist.
    private func decodeThreads(
        _ r: inout SnapshotReader,
        of state: ConversationState
    ) throws(SnapshotDecodingError) -> [ThreadState] {
        let count = try r.readCount(itemSize: SnapshotItemSize.thread)
        var threads: [ThreadState] = []
        threads.reserveCapacity(count)
        for _ in 0..<count {
            var thread = ThreadState(rootID: try r.readString(), root: try r.read())
            thread.replies = try r.readUInt32s()
            let retainedRoot = state.position(ofSequence: thread.root).map {
                IDTable.id(at: $0, bytes: state.messageIDs.bytes, ends: state.messageIDs.ends)
            }
            guard !thread.rootID.isEmpty, thread.root >= 1, thread.root <= state.lastSequence,
                retainedRoot.map({ $0 == thread.rootID }) ?? true,
                zip(thread.replies, thread.replies.dropFirst()).allSatisfy({ $0 < $1 }),
                thread.replies.allSatisfy({ reply in
                    reply > thread.root
                        && state.position(ofSequence: reply).map {
                            state.messages[$0].flags & MessageRecord.Flag.threadReply != 0
                        } == true
                })
            else { throw r.corrupt("a thread of conversation \(state.id) is inconsistent") }
            let memberCount = try r.readCount(itemSize: SnapshotItemSize.threadMember)
            for _ in 0..<memberCount {
                var member = ThreadMember(slot: try r.read())
                member.deliveredUpTo = try r.read()
                member.readUpTo = try r.read()
                member.visibleReadUpTo = try r.read()
                member.deliveredHead = try r.read()
                member.visibleHead = try r.read()
                member.flags = try r.read()
                let frozenCount = try r.readCount(itemSize: SnapshotItemSize.frozenThreadWatermarks)
                for _ in 0..<frozenCount {
                    member.frozen.append(
                        FrozenThreadWatermarks(
                            leftAfter: try r.read(),
                            deliveredUpTo: try r.read(),
                            visibleReadUpTo: try r.read()
                        )
                    )
                }
                let last = state.lastSequence
                guard Int(member.slot) < state.members.count, thread.memberIndex[member.slot] == nil,
                    member.deliveredUpTo <= last, member.readUpTo <= last, member.visibleReadUpTo <= last,
                    Int(member.deliveredHead) <= state.advances.count, Int(member.visibleHead) <= state.advances.count,
                    member.flags & ~ThreadMember.Flag.all == 0,
                    member.frozen.allSatisfy({
                        $0.leftAfter <= last && $0.deliveredUpTo <= last && $0.visibleReadUpTo <= last
                    })
                else { throw r.corrupt("a member of a thread of conversation \(state.id) is inconsistent") }
                thread.memberIndex[member.slot] = UInt32(thread.members.count)
                thread.members.append(member)
            }
            threads.append(thread)
        }
        return threads
    }

    /// A conversation's named mentions (version 4): in order, each of a retained message that is
    /// not a system message, naming a member slot other than its sender's, once.
    private func decodeMentions(
        _ r: inout SnapshotReader,
        of state: ConversationState
    ) throws(SnapshotDecodingError) -> [MentionRecord] {
        let count = try r.readCount(itemSize: SnapshotItemSize.mention)
        var mentions: [MentionRecord] = []
        mentions.reserveCapacity(count)
        for _ in 0..<count {
            let mention = MentionRecord(sequence: try r.read(), member: try r.read())
            guard let p = state.position(ofSequence: mention.sequence), Int(mention.member) < state.members.count,
                state.messages[p].sender != mention.member,
                state.messages[p].flags & MessageRecord.Flag.system == 0,
                mentions.last.map({ ($0.sequence, $0.member) < (mention.sequence, mention.member) }) ?? true
            else { throw r.corrupt("a mention of conversation \(state.id) is inconsistent") }
            mentions.append(mention)
        }
        return mentions
    }
}
