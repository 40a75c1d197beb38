import ReceiptsCore
import Testing

/// Receipt privacy fails closed: a read made while not sharing looks exactly like a delivery
/// to everyone else, in every published change, status, detail and snapshot.
struct PrivacyTests {
    /// Everything anyone but the reader can observe about a conversation.
    static func observable(_ engine: ReceiptEngine, _ conversation: String) -> ConversationSnapshot? {
        engine.snapshot(conversation: conversation, limit: 0)
    }

    static func details(_ engine: ReceiptEngine, _ conversation: String) -> [ReadDetail?] {
        (engine.snapshot(conversation: conversation, limit: 0)?.messages ?? []).map {
            engine.readDetail(conversation: conversation, message: $0.message)
        }
    }

    @Test func privateReadLooksExactlyLikeADelivery() {
        var reading = EngineHarness()
        var delivering = EngineHarness()
        for h in [0, 1] {
            var x = h == 0 ? reading : delivering
            x.group("g", ["A", "B", "C"])
            x.accept(.receiptPrivacy(user: "B", shareReads: false))
            x.send("g", "m1", from: "A")
            x.send("g", "m2", from: "C")
            if h == 0 { reading = x } else { delivering = x }
        }
        let read = reading.accept(.read(conversation: "g", user: "B", message: "m2"), clientTime: reading.now - 500)
        let delivered = delivering.accept(
            .delivered(conversation: "g", user: "B", message: "m2"),
            clientTime: delivering.now - 500
        )
        #expect(read.changes == delivered.changes)
        #expect(Self.observable(reading.engine, "g") == Self.observable(delivering.engine, "g"))
        #expect(Self.details(reading.engine, "g") == Self.details(delivering.engine, "g"))
        #expect(reading.status("g", "m1").readCount == 0)
        #expect(reading.detail("g", "m1").read.isEmpty)
        #expect(reading.text("g", "m1") == "")
        // C leaves and B leaves: a private reader drops out like a non-reader.
        for kind: EventKind in [.memberLeft(conversation: "g", user: "B")] {
            #expect(reading.apply(kind).changes == delivering.apply(kind).changes)
        }
        #expect(Self.observable(reading.engine, "g") == Self.observable(delivering.engine, "g"))
        // The reader's own unread count is right all the same.
        #expect(reading.unread("B", "g").unread == 0)
        #expect(delivering.unread("B", "g").unread == 2)
    }

    @Test func directPrivateReadShowsDelivered() {
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        h.accept(.receiptPrivacy(user: "B", shareReads: false))
        h.send("ab", "m1", from: "A")
        let changes = h.accept(.read(conversation: "ab", user: "B", message: nil)).changes
        #expect(changes.map(\.status) == [.delivered])
        #expect(changes.first?.readAt == nil)
        #expect(h.text("ab", "m1") == "Delivered")
        #expect(h.detail("ab", "m1").read.isEmpty)
        #expect(h.detail("ab", "m1").delivered.first?.readAt == nil)
    }

    @Test func turningSharingOnRevealsNothingUntilTheNextRead() {
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        h.accept(.receiptPrivacy(user: "B", shareReads: false))
        h.send("ab", "m1", from: "A")
        h.read("ab", "B", nil)
        let turnedOn = h.accept(.receiptPrivacy(user: "B", shareReads: true))
        #expect(turnedOn.changes.isEmpty)
        #expect(h.status("ab", "m1").status == .delivered)
        // The next read (even of nothing new) reveals, at that read's time.
        h.send("ab", "m2", from: "A")
        let reveal = h.accept(.read(conversation: "ab", user: "B", message: "m2"))
        #expect(reveal.changes.map(\.status) == [.read, .read])
        #expect(h.status("ab", "m1").readAt == Timestamp(milliseconds: h.now))
    }

    @Test func turningSharingOffKeepsEarlierVisibleReadsButHidesNewOnes() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        h.accept(.receiptPrivacy(user: "B", shareReads: false))
        h.send("g", "m2", from: "A")
        h.read("g", "B", nil)
        // Status never goes down: m1 stays read by B; m2 shows only a delivery.
        #expect(h.status("g", "m1").readCount == 1)
        #expect(h.status("g", "m2").readCount == 0)
        #expect(h.status("g", "m2").deliveredCount == 1)
        #expect(h.detail("g", "m2").delivered.map(\.user) == ["B"])
    }

    @Test func heldPrivateReadStaysPrivate() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.accept(.receiptPrivacy(user: "B", shareReads: false))
        #expect(h.apply(.read(conversation: "g", user: "B", message: "m1")).outcome == .accepted(held: true))
        // Sharing turned on before the message arrives: the read was made in private.
        h.accept(.receiptPrivacy(user: "B", shareReads: true))
        let sent = h.accept(.messageSent(conversation: "g", message: "m1", sender: "A", isSystem: false))
        #expect(sent.changes.map(\.status) == [.delivered])
        #expect(h.unread("B", "g").unread == 0)
        // And a held visible read applied after sharing was turned off stays hidden (fails closed).
        h.apply(.read(conversation: "g", user: "B", message: "m2"))
        h.accept(.receiptPrivacy(user: "B", shareReads: false))
        h.send("g", "m2", from: "A")
        #expect(h.status("g", "m2").readCount == 0)
    }
}

/// Receipt privacy of one conversation (issue 23): a read is shared only when both the user's
/// global setting and the conversation's allow it, so either one hides it; the setting is the
/// member's, kept in snapshots and carried by a move.
struct ConversationPrivacyTests {
    /// A group g and a group h, both with A, B and C, and messages m1 in g and n1 in h from A.
    static func twoGroups() -> EngineHarness {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.group("h", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.send("h", "n1", from: "A")
        return h
    }

    @Test func aConversationsSettingHidesReadsThereOnly() {
        var h = Self.twoGroups()
        h.accept(.conversationReceiptPrivacy(conversation: "g", user: "B", shareReads: false))
        h.accept(.read(conversation: "g", user: "B", message: "m1"))
        h.accept(.read(conversation: "h", user: "B", message: "n1"))
        #expect(h.status("g", "m1").readCount == 0)
        #expect(h.detail("g", "m1").read.isEmpty)
        #expect(h.status("h", "n1").readCount == 1)
        // The reader's own state counts the private read all the same.
        #expect(h.unread("B", "g").unread == 0)
    }

    @Test func theStricterOfTheGlobalAndTheConversationsSettingWins() {
        for (global, here) in [(false, true), (true, false), (false, false), (true, true)] {
            var h = Self.twoGroups()
            h.accept(.receiptPrivacy(user: "B", shareReads: global))
            h.accept(.conversationReceiptPrivacy(conversation: "g", user: "B", shareReads: here))
            h.accept(.read(conversation: "g", user: "B", message: "m1"))
            #expect(h.status("g", "m1").readCount == (global && here ? 1 : 0), "global \(global), here \(here)")
        }
    }

    @Test func sharingAgainInTheConversationShowsTheNextRead() {
        var h = Self.twoGroups()
        h.accept(.conversationReceiptPrivacy(conversation: "g", user: "B", shareReads: false))
        h.accept(.read(conversation: "g", user: "B", message: "m1"))
        h.accept(.conversationReceiptPrivacy(conversation: "g", user: "B", shareReads: true))
        #expect(h.status("g", "m1").readCount == 0, "a read made while private stays a delivery")
        h.send("g", "m2", from: "A")
        h.accept(.read(conversation: "g", user: "B", message: "m2"))
        #expect(h.status("g", "m2").readCount == 1)
    }

    @Test func aReceiptHeldForAnUnknownMessageKeepsTheConversationsSetting() {
        var h = Self.twoGroups()
        h.accept(.conversationReceiptPrivacy(conversation: "g", user: "B", shareReads: false))
        #expect(h.apply(.read(conversation: "g", user: "B", message: "m9")).outcome == .accepted(held: true))
        h.send("g", "m9", from: "A")
        #expect(h.status("g", "m9").readCount == 0)
        #expect(h.unread("B", "g").unread == 0)
    }

    @Test func onlyAMemberMaySetIt() {
        var h = Self.twoGroups()
        #expect(
            h.rejection(.conversationReceiptPrivacy(conversation: "g", user: "Z", shareReads: false)) == .notAMember
        )
        #expect(h.rejection(.conversationReceiptPrivacy(conversation: "nope", user: "B", shareReads: false)) != nil)
        h.accept(.userDeleted(user: "C"))
        #expect(
            h.rejection(.conversationReceiptPrivacy(conversation: "g", user: "C", shareReads: false)) == .userDeleted
        )
    }

    @Test func aSnapshotKeepsIt() throws {
        var h = Self.twoGroups()
        h.accept(.conversationReceiptPrivacy(conversation: "g", user: "B", shareReads: false))
        let restored = try ReceiptEngine(restoringFrom: h.engine.encodedState(), configuration: h.engine.configuration)
        #expect(restored.encodedState() == h.engine.encodedState())
        h.engine = restored
        h.accept(.read(conversation: "g", user: "B", message: "m1"))
        #expect(h.status("g", "m1").readCount == 0)
    }
}
