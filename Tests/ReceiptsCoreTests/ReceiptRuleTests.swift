import ReceiptsCore
import Testing

/// SPEC §4 rules beyond the seeds' scenarios.
struct ReceiptRuleTests {
    @Test func upToSemanticsCoverEveryEarlierMessage() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        for i in 1...5 { h.send("g", "m\(i)", from: i == 3 ? "B" : "A") }
        let result = h.accept(.delivered(conversation: "g", user: "C", message: "m4"))
        #expect(result.changes.map(\.message) == ["m1", "m2", "m3", "m4"])
        #expect(h.status("g", "m5").deliveredCount == 0)
        // One read event marks the whole conversation read.
        h.read("g", "C", nil)
        for i in 1...5 { #expect(h.status("g", "m\(i)").readCount == 1) }
        #expect(h.unread("C", "g").readUpTo == 5)
        // B's own message m3 is not unread for B, and B's read covers the others.
        #expect(h.unread("B", "g").unread == 4)
        h.read("g", "B", "m4")
        #expect(h.unread("B", "g").unread == 1)
    }

    @Test func recipientsAreFixedAtSendTime() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.send("g", "m1", from: "A")
        h.accept(.memberJoined(conversation: "g", user: "C"))
        h.send("g", "m2", from: "A")
        #expect(h.status("g", "m1").recipientCount == 1)
        #expect(h.status("g", "m2").recipientCount == 2)
        // C joined later: not a recipient of m1, and their "read everything" does not count there.
        #expect(h.rejection(.read(conversation: "g", user: "C", message: "m1")) == .notARecipient)
        h.read("g", "C", nil)
        #expect(h.status("g", "m1").readCount == 0)
        #expect(h.status("g", "m2").readCount == 1)
        #expect(h.unread("C", "g").unread == 0)
    }

    @Test func membershipChangesAreIdempotentAndValidated() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.accept(.memberJoined(conversation: "g", user: "B"))
        h.accept(.memberLeft(conversation: "g", user: "Z"))
        h.accept(.memberLeft(conversation: "g", user: "B"))
        h.accept(.memberLeft(conversation: "g", user: "B"))
        #expect(h.engine.snapshot(conversation: "g", limit: 0)?.members == ["A"])
        #expect(h.rejection(.memberJoined(conversation: "nope", user: "B")) == .unknownConversation)
        #expect(h.rejection(.memberLeft(conversation: "nope", user: "B")) == .unknownConversation)
        #expect(h.rejection(.memberJoined(conversation: "g", user: "")) == .invalidEvent)
        h.direct("ab", "A", "B")
        #expect(h.rejection(.memberJoined(conversation: "ab", user: "C")) == .invalidEvent)
    }

    @Test func conversationUpsertRules() {
        var h = EngineHarness()
        #expect(h.rejection(.conversationUpserted(conversation: "d", kind: .direct, members: ["A"])) == .invalidEvent)
        #expect(
            h.rejection(.conversationUpserted(conversation: "d", kind: .direct, members: ["A", "A"])) == .invalidEvent
        )
        #expect(
            h.rejection(.conversationUpserted(conversation: "d", kind: .direct, members: ["A", "B", "C"]))
                == .invalidEvent
        )
        #expect(h.rejection(.conversationUpserted(conversation: "", kind: .group, members: ["A"])) == .invalidEvent)
        #expect(
            h.rejection(.conversationUpserted(conversation: "g", kind: .group, members: ["A", ""])) == .invalidEvent
        )
        h.group("g", ["A", "B", "C"])
        #expect(
            h.rejection(.conversationUpserted(conversation: "g", kind: .direct, members: ["A", "B"])) == .invalidEvent
        )
        h.send("g", "m1", from: "A")
        // Replacing the member set derives the leave of C and the join of D at this point.
        h.accept(.conversationUpserted(conversation: "g", kind: .group, members: ["A", "B", "D", "B"]))
        #expect(h.engine.snapshot(conversation: "g", limit: 0)?.members == ["A", "B", "D"])
        #expect(h.status("g", "m1").recipientCount == 1)
        #expect(h.rejection(.read(conversation: "g", user: "D", message: "m1")) == .notARecipient)
        #expect(h.rejection(.read(conversation: "g", user: "C", message: "m1")) == .notARecipient)
        h.accept(.userDeleted(user: "X"))
        #expect(
            h.rejection(.conversationUpserted(conversation: "g", kind: .group, members: ["A", "X"])) == .userDeleted
        )
    }

    /// Member lists of more than 16 ids are de-duplicated by hashing, shorter ones by a scan:
    /// both keep the first occurrence's order and derive the same joins and leaves.
    @Test(arguments: [4, 17, 40])
    func upsertDeduplicatesMembersOfAnyCount(count: Int) {
        var h = EngineHarness()
        let members = (0..<count).map { "u\($0)" }
        h.group("g", members + members.reversed())
        #expect(h.engine.snapshot(conversation: "g", limit: 0)?.members == members)
        let kept = Array(members.dropFirst(2)) + ["new"]
        h.accept(.conversationUpserted(conversation: "g", kind: .group, members: kept + kept))
        #expect(h.engine.snapshot(conversation: "g", limit: 0)?.members == kept)
        #expect(
            h.rejection(.conversationUpserted(conversation: "g", kind: .group, members: kept + [""])) == .invalidEvent
        )
    }

    @Test func messageSentRules() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        #expect(
            h.rejection(.messageSent(conversation: "nope", message: "m", sender: "A", isSystem: false))
                == .unknownConversation
        )
        #expect(h.rejection(.messageSent(conversation: "g", message: "m", sender: "C", isSystem: false)) == .notAMember)
        #expect(
            h.rejection(.messageSent(conversation: "g", message: "", sender: "A", isSystem: false)) == .invalidEvent
        )
        #expect(
            h.rejection(.messageSent(conversation: "g", message: "m", sender: "", isSystem: false)) == .invalidEvent
        )
        h.send("g", "m", from: "A")
        #expect(
            h.rejection(.messageSent(conversation: "g", message: "m", sender: "B", isSystem: false)) == .messageExists
        )
        h.send("g", "m2", from: "B")
        #expect(h.status("g", "m").sequence == 1)
        #expect(h.status("g", "m2").sequence == 2)
        #expect(h.status("g", "m2").sentAt == Timestamp(milliseconds: h.now))
    }

    @Test func notARecipientRejectionsExplainWhy() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.accept(.memberLeft(conversation: "g", user: "C"))
        func detail(_ kind: EventKind) -> Rejection? {
            if case .rejected(let rejection) = h.apply(kind).outcome { return rejection }
            return nil
        }
        let left = detail(.read(conversation: "g", user: "C", message: "m1"))
        #expect(left?.reason == .notARecipient)
        #expect(left?.detail.contains("left") == true)
        let sender = detail(.delivered(conversation: "g", user: "A", message: "m1"))
        #expect(sender?.reason == .notARecipient)
        #expect(sender?.detail.contains("sent") == true)
        let stranger = detail(.delivered(conversation: "g", user: "Z", message: "m1"))
        #expect(stranger?.reason == .notARecipient)
        #expect(detail(.read(conversation: "g", user: "C", message: nil))?.reason == .notAMember)
        #expect(detail(.read(conversation: "g", user: "", message: nil))?.reason == .invalidEvent)
        #expect(detail(.delivered(conversation: "g", user: "B", message: ""))?.reason == .invalidEvent)
        #expect(detail(.read(conversation: "nope", user: "B", message: nil))?.reason == .unknownConversation)
        // A member who left and rejoins adds no receipt to their earlier messages: a read of one
        // moves their own watermark only (README, "Leaving and rejoining"); a delivery is refused.
        h.accept(.memberJoined(conversation: "g", user: "C"))
        h.accept(.read(conversation: "g", user: "C", message: "m1"))
        #expect(detail(.delivered(conversation: "g", user: "C", message: "m1"))?.reason == .notARecipient)
        h.read("g", "C", nil)
        #expect(h.status("g", "m1").readCount == 0)
        #expect(h.status("g", "m1").recipientCount == 1)
    }

    @Test func readOfEmptyConversationIsAcceptedNoOp() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        let result = h.accept(.read(conversation: "g", user: "B", message: nil))
        #expect(result.changes.isEmpty)
        #expect(h.unread("B", "g") == UnreadCount(conversation: "g", unread: 0, isMarkedUnread: false, readUpTo: 0))
    }

    @Test func heldReceiptIsAppliedWhenTheMessageArrives() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        let held = h.apply(.read(conversation: "g", user: "B", message: "m1"))
        #expect(held.outcome == .accepted(held: true))
        #expect(held.changes.isEmpty)
        #expect(h.engine.counters.heldReceipts == 1)
        let sent = h.accept(.messageSent(conversation: "g", message: "m1", sender: "A", isSystem: false))
        #expect(h.engine.counters.heldReceipts == 0)
        #expect(sent.changes.count == 1)
        #expect(sent.changes.first?.status == .readBySome)
        // Recorded before the message existed: its time is clamped up to the send time.
        #expect(h.status("g", "m1").readAt == h.status("g", "m1").sentAt)
    }

    @Test func heldReceiptUsesItsRecordedTimeNeverBeforeTheSend() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.send("g", "m0", from: "A")
        // Held with a client time (an offline read), applied when m1 arrives in the same
        // millisecond: the recorded time stands.
        h.apply(.delivered(conversation: "g", user: "B", message: "m1"), clientTime: h.now + 7, after: 10)
        let recorded = h.now
        h.apply(.messageSent(conversation: "g", message: "m1", sender: "A", isSystem: false), after: 0)
        #expect(h.detail("g", "m0").delivered.first?.deliveredAt == Timestamp(milliseconds: recorded))
        // Arriving later, a receipt recorded before its message is clamped up to the send time.
        h.apply(.read(conversation: "g", user: "B", message: "m2"), after: 10)
        h.apply(.messageSent(conversation: "g", message: "m2", sender: "A", isSystem: false), after: 100)
        #expect(h.status("g", "m2").readAt == h.status("g", "m2").sentAt)
        #expect(h.status("g", "m1").readAt == h.status("g", "m2").sentAt)
    }

    @Test func heldReceiptDroppedAndCountedAfterItsLifetime() {
        var h = EngineHarness(configuration: EngineConfiguration(pendingReceiptLifetime: 10_000))
        h.group("g", ["A", "B"])
        #expect(h.apply(.delivered(conversation: "g", user: "B", message: "late")).outcome == .accepted(held: true))
        h.apply(.memberJoined(conversation: "g", user: "C"), after: 10_000)
        #expect(h.engine.counters.heldReceipts == 1)
        h.apply(.memberJoined(conversation: "g", user: "D"), after: 1)
        #expect(h.engine.counters.heldReceipts == 0)
        #expect(h.engine.counters.droppedPendingReceipts == 1)
        h.send("g", "late", from: "A")
        #expect(h.status("g", "late").deliveredCount == 0)
    }

    @Test func pendingFullRejectsBeyondTheBound() {
        var h = EngineHarness(configuration: EngineConfiguration(pendingReceiptLimit: 2))
        h.group("g", ["A", "B"])
        #expect(h.apply(.delivered(conversation: "g", user: "B", message: "x1")).outcome == .accepted(held: true))
        #expect(h.apply(.delivered(conversation: "g", user: "B", message: "x2")).outcome == .accepted(held: true))
        #expect(h.rejection(.delivered(conversation: "g", user: "B", message: "x3")) == .pendingFull)
        h.send("g", "x1", from: "A")
        #expect(h.apply(.delivered(conversation: "g", user: "B", message: "x3")).outcome == .accepted(held: true))
    }

    @Test func heldReceiptOfNonRecipientIsDiscardedAndCounted() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.apply(.read(conversation: "g", user: "Z", message: "m1"))
        h.apply(.read(conversation: "g", user: "A", message: "m1"))
        h.send("g", "m1", from: "A")
        #expect(h.engine.counters.discardedHeldReceipts == 2)
        #expect(h.status("g", "m1").readCount == 0)
    }

    @Test func duplicatesAreRecognisedAndChangeNothing() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.send("g", "m1", from: "A")
        let event = Event(
            id: EventID(source: "gw", sequence: 7),
            kind: .read(conversation: "g", user: "B", message: nil)
        )
        let first = h.engine.apply(event, at: Timestamp(milliseconds: h.now))
        #expect(first.outcome == .accepted(held: false))
        let state = h.engine.encodedState()
        let again = h.engine.apply(event, at: Timestamp(milliseconds: h.now + 5))
        #expect(again.outcome == .duplicate)
        #expect(again.changes.isEmpty)
        #expect(h.engine.encodedState() == state)
        // A different event with a reused id is still a duplicate: ids, not contents, decide.
        let reused = Event(id: EventID(source: "gw", sequence: 7), kind: .memberLeft(conversation: "g", user: "B"))
        #expect(h.engine.apply(reused, at: Timestamp(milliseconds: h.now)).outcome == .duplicate)
        // Out-of-order ids inside the window are new; older than the window cannot be told
        // apart, so they are refused as such (ReplayWindowTests), never called duplicates.
        let lower = Event(id: EventID(source: "gw", sequence: 3), kind: .memberJoined(conversation: "g", user: "C"))
        #expect(h.engine.apply(lower, at: Timestamp(milliseconds: h.now)).outcome == .accepted(held: false))
        let far = Event(id: EventID(source: "gw", sequence: 10_000), kind: .memberJoined(conversation: "g", user: "D"))
        #expect(h.engine.apply(far, at: Timestamp(milliseconds: h.now)).outcome == .accepted(held: false))
        let ancient = Event(id: EventID(source: "gw", sequence: 4), kind: .memberJoined(conversation: "g", user: "E"))
        let answer = h.engine.apply(ancient, at: Timestamp(milliseconds: h.now)).outcome
        if case .rejected(let rejection) = answer {
            #expect(rejection.reason == .outsideReplayWindow)
        } else {
            Issue.record("an id older than the window was answered \(answer)")
        }
        // Other sources have their own windows.
        let other = Event(id: EventID(source: "gw2", sequence: 7), kind: .memberJoined(conversation: "g", user: "E"))
        #expect(h.engine.apply(other, at: Timestamp(milliseconds: h.now)).outcome == .accepted(held: false))
    }

    @Test func rejectedEventIsReevaluatedWhenResent() {
        var engine = ReceiptEngine()
        let now = Timestamp(milliseconds: 1000)
        let receipt = Event(id: EventID(source: "gw", sequence: 1), kind: .memberJoined(conversation: "g", user: "B"))
        guard case .rejected(let first) = engine.apply(receipt, at: now).outcome else {
            Issue.record()
            return
        }
        guard case .rejected(let second) = engine.apply(receipt, at: now).outcome else {
            Issue.record()
            return
        }
        #expect(first == second)
        _ = engine.apply(
            Event(
                id: EventID(source: "gw", sequence: 2),
                kind: .conversationUpserted(conversation: "g", kind: .group, members: ["A"])
            ),
            at: now
        )
        #expect(engine.apply(receipt, at: now).outcome == .accepted(held: false))
        #expect(engine.apply(receipt, at: now).outcome == .duplicate)
    }

    @Test func invalidEventIDsAreRejectedFirst() {
        var engine = ReceiptEngine()
        for id in [EventID(source: "", sequence: 1), EventID(source: "gw", sequence: 0)] {
            let result = engine.apply(Event(id: id, kind: .unknown), at: Timestamp(milliseconds: 0))
            guard case .rejected(let rejection) = result.outcome else {
                Issue.record()
                continue
            }
            #expect(rejection.reason == .invalidEventID)
        }
        let unknown = engine.apply(
            Event(id: EventID(source: "gw", sequence: 1), kind: .unknown),
            at: Timestamp(milliseconds: 0)
        )
        #expect(unknown.outcome == .rejected(Rejection(.unknownEventKind, "the event has no kind this build knows")))
    }

    @Test func ownershipRejectionNamesTheOwner() {
        let workers = 4
        let conversation = (0..<100).map { "conv-\($0)" }.first {
            Partitioning.owner(of: $0, workerCount: workers) != 0
        }!
        let owner = Partitioning.owner(of: conversation, workerCount: workers)
        var h = EngineHarness(configuration: EngineConfiguration(workerIndex: 0, workerCount: workers))
        let result = h.apply(.conversationUpserted(conversation: conversation, kind: .group, members: ["A"]))
        guard case .rejected(let rejection) = result.outcome else {
            Issue.record("expected a rejection")
            return
        }
        #expect(rejection.reason == .notOwner)
        #expect(rejection.ownerWorker == owner)
        #expect(rejection.detail.contains("worker \(owner)"))
        // The owner accepts it; user-wide events apply on every worker.
        var owning = EngineHarness(configuration: EngineConfiguration(workerIndex: owner, workerCount: workers))
        owning.accept(.conversationUpserted(conversation: conversation, kind: .group, members: ["A"]))
        h.accept(.userDeleted(user: "A"))
        h.accept(.receiptPrivacy(user: "B", shareReads: false))
    }

    @Test func markUnreadIsClearedByTheNextRead() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        let before = h.status("g", "m1")
        let marked = h.accept(.markedUnread(conversation: "g", user: "B"))
        #expect(marked.changes.isEmpty)
        #expect(h.unread("B", "g").isMarkedUnread)
        // It never takes back the receipt others have seen.
        #expect(h.status("g", "m1") == before)
        // Opening the conversation again (a read, even one that advances nothing) clears it.
        h.read("g", "B", nil)
        #expect(!h.unread("B", "g").isMarkedUnread)
        #expect(h.rejection(.markedUnread(conversation: "g", user: "Z")) == .notAMember)
        #expect(h.rejection(.markedUnread(conversation: "nope", user: "B")) == .unknownConversation)
        #expect(h.rejection(.markedUnread(conversation: "g", user: "")) == .invalidEvent)
    }

    @Test func unreadCountsPerConversation() {
        var h = EngineHarness()
        h.group("g1", ["A", "B"])
        h.group("g2", ["A", "B", "C"])
        h.send("g1", "a", from: "A")
        h.send("g1", "b", from: "B")
        h.send("g1", "s", from: "A", system: true)
        h.send("g1", "c", from: "A")
        h.send("g2", "x", from: "C")
        h.send("g2", "gone", from: "C")
        h.accept(.messageDeleted(conversation: "g2", message: "gone"))
        let all = h.engine.unreadCounts(user: "B", conversations: [])
        #expect(all.map(\.conversation) == ["g1", "g2"])
        #expect(all.map(\.unread) == [2, 1])
        h.read("g1", "B", "a")
        #expect(h.unread("B", "g1").unread == 1)
        #expect(h.unread("B", "g1").readUpTo == 1)
        // Listed conversations: unknown ones are left out; non-members get zero.
        let listed = h.engine.unreadCounts(user: "C", conversations: ["g1", "nope", "g2"])
        #expect(listed.map(\.conversation) == ["g1", "g2"])
        #expect(listed.map(\.unread) == [0, 0])
        #expect(h.engine.unreadCounts(user: "nobody", conversations: []).isEmpty)
        // A member who left keeps the unread count of what they received.
        h.accept(.memberLeft(conversation: "g2", user: "B"))
        #expect(h.engine.unreadCounts(user: "B", conversations: []).map(\.conversation) == ["g1"])
        #expect(h.unread("B", "g2").unread == 1)
    }

    @Test func lastSentIsTheSendersLatestNormalMessage() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.send("g", "a1", from: "A")
        h.send("g", "b1", from: "B")
        h.send("g", "a-sys", from: "A", system: true)
        #expect(h.engine.lastSent(conversation: "g", sender: "A")?.message == "a1")
        #expect(h.engine.lastSent(conversation: "g", sender: "B")?.message == "b1")
        #expect(h.engine.lastSent(conversation: "g", sender: "Z") == nil)
        #expect(h.engine.lastSent(conversation: "nope", sender: "A") == nil)
    }

    @Test func snapshotLimitAndUnknownConversation() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        for i in 1...5 { h.send("g", "m\(i)", from: "A") }
        #expect(h.engine.snapshot(conversation: "g", limit: 2)?.messages.map(\.message) == ["m4", "m5"])
        #expect(h.engine.snapshot(conversation: "g", limit: 0)?.messages.count == 5)
        #expect(h.engine.snapshot(conversation: "g", limit: 99)?.messages.count == 5)
        #expect(h.engine.snapshot(conversation: "nope", limit: 0) == nil)
        #expect(h.engine.kind(of: "nope") == nil)
        #expect(h.engine.kind(of: "g") == .group)
    }

    @Test func leavingWithNobodyCountedKeepsTheStatus() {
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        h.send("ab", "m1", from: "A")
        let left = h.accept(.memberLeft(conversation: "ab", user: "B"))
        // No recipient counts any more: "Delivered" would be a lie, nobody read it.
        #expect(left.changes.map(\.recipientCount) == [0])
        #expect(h.status("ab", "m1").status == .notDelivered)
        #expect(h.text("ab", "m1") == "")
    }
}

/// Held receipts under churn: many held and resolved, some expiring, in any interleaving.
struct HeldReceiptChurnTests {
    @Test func manyHeldAndResolvedReceiptsKeepExpiryExact() {
        var h = EngineHarness(configuration: EngineConfiguration(pendingReceiptLifetime: 30_000))
        h.group("g", ["A", "B", "C"])
        var expectedDropped = 0
        for round in 0..<3000 {
            // Two receipts wait for each message; every seventh message never comes.
            h.apply(.delivered(conversation: "g", user: "B", message: "m\(round)"), after: 10)
            h.apply(.read(conversation: "g", user: "C", message: "m\(round)"), after: 10)
            if round % 7 == 0 {
                expectedDropped += 2
            } else {
                h.accept(.messageSent(conversation: "g", message: "m\(round)", sender: "A", isSystem: false), after: 10)
            }
        }
        h.apply(.memberJoined(conversation: "g", user: "D"), after: 60_000)
        #expect(h.engine.counters.heldReceipts == 0)
        #expect(h.engine.counters.droppedPendingReceipts == expectedDropped)
        #expect(h.status("g", "m1").status == .readBySome)
        #expect(h.status("g", "m2999").readCount == 1)
    }
}
