import ReceiptsCore
import Testing

/// Worker count changes in the engine (deploy/SCALING.md): prepare, freeze and export, import,
/// release, commit, as the driver runs them, on engines in one process.
struct MoveTests {
    static let start: Int64 = 1_700_000_000_000

    /// One engine per ordinal, each driven like a worker, with a shared clock.
    struct Cluster {
        var workers: [ReceiptEngine]
        var now = MoveTests.start
        var sequence: UInt64 = 0

        /// `count` workers with ordinals `0..<slots`, all created under `count`.
        init(count: Int, slots: Int) {
            workers = (0..<slots).map {
                // Held receipts wait an hour: the moves below happen well inside it.
                ReceiptEngine(
                    configuration: EngineConfiguration(
                        workerIndex: $0,
                        workerCount: count,
                        pendingReceiptLifetime: 3_600_000
                    )
                )
            }
        }

        /// Applies an event on `worker` with the next id of source "g", at the current time
        /// (`tick` moves it).
        mutating func apply(_ kind: EventKind, on worker: Int, id: UInt64? = nil) -> EventOutcome {
            let sequence =
                id
                ?? {
                    self.sequence += 1
                    return self.sequence
                }()
            let event = Event(id: EventID(source: "g", sequence: sequence), clientTime: nil, kind: kind)
            return workers[worker].apply(event, at: Timestamp(milliseconds: now)).outcome
        }

        /// One second later.
        mutating func tick() {
            now += 1000
        }

        /// Applies an event a second later on the worker that owns its conversation now
        /// (following redirects), as a gateway does.
        mutating func route(_ kind: EventKind) -> EventOutcome {
            tick()
            var worker = 0
            for _ in 0..<4 {
                let outcome = apply(kind, on: worker)
                guard case .rejected(let rejection) = outcome, rejection.reason == .notOwner else { return outcome }
                sequence -= 1
                worker = rejection.ownerWorker ?? 0
            }
            return .rejected(Rejection(.notOwner, "redirected too often"))
        }

        /// The worker that serves a conversation, if exactly one does.
        func server(of conversation: String) -> Int? {
            let serving = workers.indices.filter { workers[$0].route(conversation: conversation) == .serve }
            return serving.count == 1 ? serving[0] : nil
        }

        /// Runs a whole move as `receiptctl rebalance` does, `batch` conversations at a time.
        mutating func move(from: Int, to: Int, epoch: UInt64, batch: Int = 3) throws {
            for w in 0..<max(from, to) { try workers[w].prepareMove(epoch: epoch, from: from, to: to) }
            let senders = from < to ? 0..<from : to..<from
            let receivers = from < to ? from..<to : 0..<to
            for sender in senders {
                for receiver in receivers {
                    while true {
                        let (ids, remaining) = try workers[sender].conversationsToExport(
                            epoch: epoch,
                            destination: receiver,
                            limit: batch
                        )
                        try transfer(ids, from: sender, to: receiver, epoch: epoch)
                        if remaining == 0 { break }
                    }
                    _ = try workers[receiver].importConversations(
                        .none,
                        epoch: epoch,
                        from: sender,
                        last: true,
                        at: Timestamp(milliseconds: now)
                    )
                }
            }
            for w in 0..<max(from, to) { try workers[w].commitMove(epoch: epoch) }
        }

        /// Freeze, export, import, release of some conversations.
        mutating func transfer(_ ids: [String], from sender: Int, to receiver: Int, epoch: UInt64) throws {
            guard !ids.isEmpty else { return }
            try workers[sender].freeze(ids, epoch: epoch, to: receiver)
            let export = try ExportedConversations(workers[sender].exportedState(of: ids))
            let outcome = try workers[receiver].importConversations(
                export,
                epoch: epoch,
                from: sender,
                last: false,
                at: Timestamp(milliseconds: now)
            )
            #expect(outcome.imported + outcome.alreadyHeld == ids.count)
            try workers[sender].release(ids, epoch: epoch, to: receiver)
        }
    }

    static let conversations = (0..<24).map { "conv-\($0)" }

    /// Groups with deliveries, visible and private reads, a held receipt, a mark unread.
    static func populate(_ cluster: inout Cluster) {
        // A user-wide event goes to every worker, with one id, as gateways send it.
        cluster.sequence += 1
        cluster.tick()
        for w in cluster.workers.indices {
            let privacy = EventKind.receiptPrivacy(user: "eve", shareReads: false)
            #expect(cluster.apply(privacy, on: w, id: cluster.sequence) == .accepted(held: false))
        }
        for c in conversations {
            #expect(
                cluster.route(.conversationUpserted(conversation: c, kind: .group, members: ["ann", "bob", "eve"]))
                    == .accepted(held: false)
            )
            for m in 1...3 {
                _ = cluster.route(.messageSent(conversation: c, message: "m\(m)", sender: "ann", isSystem: false))
            }
            _ = cluster.route(.delivered(conversation: c, user: "bob", message: "m3"))
            _ = cluster.route(.read(conversation: c, user: "bob", message: "m1"))
            _ = cluster.route(.read(conversation: c, user: "eve", message: "m2"))
            _ = cluster.route(.markedUnread(conversation: c, user: "bob"))
            // A receipt for a message that has not arrived yet: held.
            #expect(cluster.route(.delivered(conversation: c, user: "eve", message: "m4")) == .accepted(held: true))
        }
    }

    /// Expects two views to be equal, naming the first line that differs.
    static func expectEqual(_ moved: [String], _ unmoved: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(moved.count == unmoved.count, sourceLocation: sourceLocation)
        if let i = moved.indices.first(where: { $0 < unmoved.count && moved[$0] != unmoved[$0] }) {
            Issue.record(
                "line \(i) differs:\n  moved:   \(moved[i])\n  unmoved: \(unmoved[i])",
                sourceLocation: sourceLocation
            )
        }
    }

    /// Everything a client can see of the conversations, from whichever worker serves each.
    static func view(_ cluster: Cluster) -> [String] {
        var lines: [String] = []
        for c in conversations {
            guard let w = cluster.server(of: c) else {
                lines.append(
                    "\(c): served by \(cluster.workers.indices.filter { cluster.workers[$0].route(conversation: c) == .serve })"
                )
                continue
            }
            let engine = cluster.workers[w]
            for m in ["m1", "m2", "m3", "m4"] {
                lines.append("\(engine.status(conversation: c, message: m).map { "\($0)" } ?? "-")")
                lines.append("\(engine.readDetail(conversation: c, message: m).map { "\($0)" } ?? "-")")
            }
            for user in ["ann", "bob", "eve"] {
                lines.append("\(engine.unreadCounts(user: user, conversations: [c]))")
            }
            lines.append("\(engine.lastSent(conversation: c, sender: "ann").map { "\($0)" } ?? "-")")
        }
        return lines
    }

    @Test(arguments: [(1, 2), (2, 3), (3, 2), (2, 1)])
    func everyConversationEndsWithOneOwnerAndTheSameState(from: Int, to: Int) throws {
        var moved = Cluster(count: from, slots: max(from, to))
        Self.populate(&moved)
        var unmoved = Cluster(count: from, slots: from)
        Self.populate(&unmoved)

        try moved.move(from: from, to: to, epoch: 1)

        for c in Self.conversations {
            #expect(moved.server(of: c) == Partitioning.owner(of: c, workerCount: to), "\(c)")
        }
        Self.expectEqual(Self.view(moved), Self.view(unmoved))
        for w in moved.workers.indices {
            #expect(moved.workers[w].topology.workerCount == to)
            #expect(moved.workers[w].topology.targetCount == nil)
            #expect(moved.workers[w].moveProgress.frozen == 0)
            #expect(moved.workers[w].moveProgress.released == 0, "released state leaves at the commit")
        }
        let held = moved.workers.reduce(0) { $0 + $1.counters.conversations }
        #expect(held == Self.conversations.count, "every conversation held exactly once")

        // Both sides go on the same way: the held receipts apply when their message arrives.
        for c in Self.conversations {
            let event = EventKind.messageSent(conversation: c, message: "m4", sender: "ann", isSystem: false)
            #expect(moved.route(event) == .accepted(held: false))
            #expect(unmoved.route(event) == .accepted(held: false))
        }
        Self.expectEqual(Self.view(moved), Self.view(unmoved))
    }

    @Test func nobodyServesAFrozenConversationAndNewOnesWaitForTheirSender() throws {
        var cluster = Cluster(count: 1, slots: 2)
        Self.populate(&cluster)
        let moving = try #require(Self.conversations.first { Partitioning.owner(of: $0, workerCount: 2) == 1 })
        let fresh = try #require(
            (0..<100).map { "new-\($0)" }.first { Partitioning.owner(of: $0, workerCount: 2) == 1 }
        )
        try cluster.workers[0].prepareMove(epoch: 1, from: 1, to: 2)
        try cluster.workers[1].prepareMove(epoch: 1, from: 1, to: 2)

        // Prepared: the old owner still serves what it holds, and creates nothing that moves.
        #expect(cluster.workers[0].route(conversation: moving) == .serve)
        #expect(cluster.workers[1].route(conversation: moving) == .moving)
        #expect(cluster.workers[0].route(conversation: fresh) == .notOwner(1))
        #expect(cluster.workers[1].route(conversation: fresh) == .moving)

        try cluster.workers[0].freeze([moving], epoch: 1, to: 1)
        let read = EventKind.read(conversation: moving, user: "bob", message: "m3")
        guard case .rejected(let rejection) = cluster.apply(read, on: 0) else {
            Issue.record("a frozen conversation took an event")
            return
        }
        #expect(rejection.reason == .moving)
        #expect(cluster.server(of: moving) == nil)

        try cluster.transfer([moving], from: 0, to: 1, epoch: 1)
        #expect(cluster.workers[0].route(conversation: moving) == .notOwner(1))
        #expect(cluster.server(of: moving) == 1)
        #expect(cluster.apply(read, on: 1) == .accepted(held: false))

        // The receiver creates new conversations once the sender has sent everything.
        let upsert = EventKind.conversationUpserted(conversation: fresh, kind: .direct, members: ["ann", "bob"])
        guard case .rejected(let early) = cluster.apply(upsert, on: 1) else {
            Issue.record("a receiver created a conversation its sender may still hold")
            return
        }
        #expect(early.reason == .moving)
        _ = try cluster.workers[1].importConversations(
            .none,
            epoch: 1,
            from: 0,
            last: true,
            at: Timestamp(milliseconds: cluster.now)
        )
        #expect(cluster.apply(upsert, on: 1) == .accepted(held: false))
    }

    @Test func aConversationsReceiptPrivacyMovesWithIt() throws {
        var cluster = Cluster(count: 1, slots: 2)
        Self.populate(&cluster)
        let c = try #require(Self.conversations.first { Partitioning.owner(of: $0, workerCount: 2) == 1 })
        let privacy = EventKind.conversationReceiptPrivacy(conversation: c, user: "ann", shareReads: false)
        #expect(cluster.apply(privacy, on: 0) == .accepted(held: false))
        try cluster.move(from: 1, to: 2, epoch: 1)
        _ = cluster.route(.messageSent(conversation: c, message: "m5", sender: "bob", isSystem: false))
        #expect(cluster.apply(.read(conversation: c, user: "ann", message: "m5"), on: 1) == .accepted(held: false))
        #expect(
            cluster.workers[1].status(conversation: c, message: "m5")?.readCount == 0,
            "ann's read showed after the move"
        )
    }

    @Test func anEventTheSenderAppliedIsADuplicateOnTheReceiver() throws {
        var cluster = Cluster(count: 1, slots: 2)
        Self.populate(&cluster)
        let c = try #require(Self.conversations.first { Partitioning.owner(of: $0, workerCount: 2) == 1 })
        let read = EventKind.read(conversation: c, user: "bob", message: "m3")
        #expect(cluster.apply(read, on: 0, id: 9000) == .accepted(held: false))
        try cluster.move(from: 1, to: 2, epoch: 1)
        // The gateway lost the acknowledgement and sends it again, to the new owner.
        #expect(cluster.apply(read, on: 1, id: 9000) == .duplicate)
        #expect(cluster.apply(read, on: 1, id: 9001) == .accepted(held: false))
        // The frozen windows are dropped after a day; then only the receiver's own count.
        cluster.now += 86_400_001
        #expect(
            cluster.apply(.read(conversation: c, user: "ann", message: nil), on: 1, id: 9002) == .accepted(held: false)
        )
    }

    @Test func anEventTheSenderNeverSawIsAppliedHoweverFarBelowItsNewestSequence() throws {
        var cluster = Cluster(count: 1, slots: 2)
        Self.populate(&cluster)
        let c = try #require(Self.conversations.first { Partitioning.owner(of: $0, workerCount: 2) == 1 })
        let stays = try #require(Self.conversations.first { Partitioning.owner(of: $0, workerCount: 2) == 0 })
        // Far more events from the same source than a window holds, all on the sender.
        for id in UInt64(10_000)..<15_000 {
            let outcome = cluster.apply(.read(conversation: stays, user: "bob", message: nil), on: 0, id: id)
            #expect(outcome == .accepted(held: false))
        }
        try cluster.move(from: 1, to: 2, epoch: 1)
        // An event numbered long before, that waited for the move (answered moving): new.
        let read = EventKind.read(conversation: c, user: "bob", message: "m3")
        #expect(cluster.apply(read, on: 1, id: 600) == .accepted(held: false))
    }

    @Test func aUserDeletedBeforeTheImportLeavesTheImportedConversations() throws {
        var moved = Cluster(count: 1, slots: 2)
        Self.populate(&moved)
        let c = try #require(Self.conversations.first { Partitioning.owner(of: $0, workerCount: 2) == 1 })
        for w in 0..<2 { try moved.workers[w].prepareMove(epoch: 1, from: 1, to: 2) }
        try moved.workers[0].freeze([c], epoch: 1, to: 1)
        let export = try ExportedConversations(moved.workers[0].exportedState(of: [c]))
        // The deletion reaches the receiver before the import, and the sender after the freeze.
        moved.sequence += 1
        for w in 0..<2 {
            #expect(moved.apply(.userDeleted(user: "eve"), on: w, id: moved.sequence) == .accepted(held: false))
        }
        _ = try moved.workers[1].importConversations(
            export,
            epoch: 1,
            from: 0,
            last: true,
            at: Timestamp(milliseconds: moved.now)
        )
        let detail = try #require(moved.workers[1].readDetail(conversation: c, message: "m3"))
        #expect(detail.notDelivered.isEmpty, "eve left with her deletion: \(detail)")
        #expect(
            moved.apply(.messageSent(conversation: c, message: "m9", sender: "ann", isSystem: false), on: 1)
                == .accepted(held: false)
        )
        #expect(moved.workers[1].status(conversation: c, message: "m9")?.recipientCount == 1, "only bob receives m9")
    }

    @Test func aCommitBeforeEveryConversationMovedIsRefused() throws {
        var cluster = Cluster(count: 1, slots: 2)
        Self.populate(&cluster)
        for w in 0..<2 { try cluster.workers[w].prepareMove(epoch: 1, from: 1, to: 2) }
        // The sender still holds conversations that go to worker 1; the receiver has not heard
        // `last` from the sender.
        #expect(throws: MoveError.self) { try cluster.workers[0].commitMove(epoch: 1) }
        #expect(throws: MoveError.self) { try cluster.workers[1].commitMove(epoch: 1) }
        let staying = try #require(Self.conversations.first { Partitioning.owner(of: $0, workerCount: 2) == 0 })
        #expect(throws: MoveError.self) { try cluster.workers[0].freeze([staying], epoch: 1, to: 1) }
        #expect(throws: MoveError.self) { try cluster.workers[0].release([staying], epoch: 1, to: 1) }
        for c in Self.conversations {
            #expect(cluster.server(of: c) != nil, "\(c) has one server after the refusals")
        }
    }

    @Test func repeatingAStepAppliesNothingTwice() throws {
        var cluster = Cluster(count: 1, slots: 2)
        Self.populate(&cluster)
        try cluster.workers[0].prepareMove(epoch: 1, from: 1, to: 2)
        try cluster.workers[0].prepareMove(epoch: 1, from: 1, to: 2)
        try cluster.workers[1].prepareMove(epoch: 1, from: 1, to: 2)
        let (ids, _) = try cluster.workers[0].conversationsToExport(epoch: 1, destination: 1, limit: 100)
        try cluster.workers[0].freeze(ids, epoch: 1, to: 1)
        let bytes = cluster.workers[0].exportedState(of: ids)
        let now = Timestamp(milliseconds: cluster.now)
        func importTheExport() throws -> (imported: Int, alreadyHeld: Int) {
            try cluster.workers[1].importConversations(
                try ExportedConversations(bytes),
                epoch: 1,
                from: 0,
                last: false,
                at: now
            )
        }
        let first = try importTheExport()
        let state = cluster.workers[1].encodedState()
        let again = try importTheExport()
        #expect(first.imported == ids.count && first.alreadyHeld == 0)
        #expect(again.imported == 0 && again.alreadyHeld == ids.count)
        #expect(cluster.workers[1].encodedState() == state)
        // An export asked again after a lost answer gives the frozen ones first.
        #expect(try cluster.workers[0].conversationsToExport(epoch: 1, destination: 1, limit: ids.count).ids == ids)
        #expect(try cluster.workers[0].release(ids, epoch: 1, to: 1) == ids.count)
        #expect(try cluster.workers[0].release(ids, epoch: 1, to: 1) == 0)
        try cluster.workers[0].commitMove(epoch: 1)
        try cluster.workers[0].commitMove(epoch: 1)
        #expect(cluster.workers[0].topology.workerCount == 2)
    }

    @Test func aSnapshotInTheMiddleOfAMoveRestoresIt() throws {
        var cluster = Cluster(count: 1, slots: 2)
        Self.populate(&cluster)
        for w in 0..<2 { try cluster.workers[w].prepareMove(epoch: 7, from: 1, to: 2) }
        let (ids, _) = try cluster.workers[0].conversationsToExport(epoch: 7, destination: 1, limit: 100)
        try #require(ids.count >= 2)
        try cluster.transfer(Array(ids.prefix(1)), from: 0, to: 1, epoch: 7)
        try cluster.workers[0].freeze(Array(ids.dropFirst()), epoch: 7, to: 1)
        for w in 0..<2 {
            let configuration = EngineConfiguration(workerIndex: w, workerCount: 1)
            let restored = try ReceiptEngine(
                restoringFrom: cluster.workers[w].encodedState(),
                configuration: configuration
            )
            #expect(restored.topology == cluster.workers[w].topology)
            #expect(restored.moveProgress == cluster.workers[w].moveProgress)
            for c in Self.conversations {
                #expect(restored.route(conversation: c) == cluster.workers[w].route(conversation: c), "\(c) on \(w)")
            }
            #expect(restored.encodedState() == cluster.workers[w].encodedState())
        }
    }

    @Test func stepsThatDoNotFitAreRefusedAndChangeNothing() throws {
        var cluster = Cluster(count: 2, slots: 3)
        Self.populate(&cluster)
        let before = cluster.workers[0].encodedState()
        #expect(throws: MoveError.self) { try cluster.workers[0].prepareMove(epoch: 1, from: 3, to: 4) }
        #expect(throws: MoveError.self) { try cluster.workers[0].prepareMove(epoch: 1, from: 2, to: 2) }
        #expect(throws: MoveError.self) { try cluster.workers[0].freeze(["conv-1"], epoch: 1, to: 1) }
        #expect(throws: MoveError.self) {
            try cluster.workers[0].conversationsToExport(epoch: 1, destination: 2, limit: 5)
        }
        #expect(cluster.workers[0].encodedState() == before)

        try cluster.workers[0].prepareMove(epoch: 4, from: 2, to: 3)
        #expect(throws: MoveError.self) { try cluster.workers[0].prepareMove(epoch: 3, from: 2, to: 3) }
        #expect(throws: MoveError.self) { try cluster.workers[0].prepareMove(epoch: 5, from: 2, to: 4) }
        let (ids, _) = try cluster.workers[0].conversationsToExport(epoch: 4, destination: 2, limit: 5)
        try #require(!ids.isEmpty)
        try cluster.workers[0].freeze(ids, epoch: 4, to: 2)
        #expect(throws: MoveError.self) { try cluster.workers[0].commitMove(epoch: 4) }
        // An import into a worker the conversations do not move to.
        try cluster.workers[1].prepareMove(epoch: 4, from: 2, to: 3)
        let export = try ExportedConversations(cluster.workers[0].exportedState(of: ids))
        #expect(throws: MoveError.self) {
            _ = try cluster.workers[1].importConversations(
                export,
                epoch: 4,
                from: 0,
                last: false,
                at: Timestamp(milliseconds: 0)
            )
        }
        #expect(throws: MoveError.self) { try ExportedConversations([1, 2, 3]) }
    }

    /// A user-wide unread count (no conversations named) is asked of every worker and the
    /// answers are put together: each conversation must be in exactly one answer at every step,
    /// although between its import and its release both the sender (frozen) and the receiver
    /// (imported) hold it. Only the worker that serves it lists it.
    @Test func aUserWideUnreadCountListsEveryConversationOnceInTheMiddleOfAMove() throws {
        var cluster = Cluster(count: 1, slots: 2)
        Self.populate(&cluster)
        /// The conversations listed by the two workers together, each with how often.
        func listed() -> [String: Int] {
            var times: [String: Int] = [:]
            for worker in cluster.workers {
                for count in worker.unreadCounts(user: "bob", conversations: []) {
                    times[count.conversation, default: 0] += 1
                }
            }
            return times
        }
        let everyOnce = Dictionary(uniqueKeysWithValues: Self.conversations.map { ($0, 1) })
        #expect(listed() == everyOnce)

        for w in 0..<2 { try cluster.workers[w].prepareMove(epoch: 1, from: 1, to: 2) }
        let (ids, _) = try cluster.workers[0].conversationsToExport(epoch: 1, destination: 1, limit: 5)
        try #require(!ids.isEmpty)
        try cluster.workers[0].freeze(ids, epoch: 1, to: 1)
        #expect(listed().values.allSatisfy { $0 == 1 }, "frozen: listed by nobody, or once")
        let export = try ExportedConversations(cluster.workers[0].exportedState(of: ids))
        _ = try cluster.workers[1].importConversations(
            export,
            epoch: 1,
            from: 0,
            last: false,
            at: Timestamp(milliseconds: cluster.now)
        )
        #expect(listed() == everyOnce, "imported, not yet released")
        try cluster.workers[0].release(ids, epoch: 1, to: 1)
        #expect(listed() == everyOnce, "released")
    }

    @Test func aVersion2SnapshotRestoresWithThePlacementOfTheConfiguredCount() throws {
        var cluster = Cluster(count: 1, slots: 1)
        Self.populate(&cluster)
        // Version 2 had no trailer: no topology, placements or frozen windows.
        let version2 = cluster.workers[0].encodedState(version: 2)
        let restored = try ReceiptEngine(
            restoringFrom: version2,
            configuration: EngineConfiguration(workerIndex: 1, workerCount: 2)
        )
        #expect(restored.topology.workerCount == 2)
        for c in Self.conversations {
            let owner = Partitioning.owner(of: c, workerCount: 2)
            #expect(restored.route(conversation: c) == (owner == 1 ? .serve : .notOwner(owner)), "\(c)")
        }
    }
}
