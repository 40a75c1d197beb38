import ReceiptsCore
import Testing

/// Seed 003 ("Story 3.6: Group Read Receipts"): its eight test procedures and its edge cases.
struct SeedGroupReadReceiptsTests {
    @Test func procedure1ShowReadReceiptsOwnMessage() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.deliver("g", "B", "m1")
        h.deliver("g", "C", "m1")
        var detail = h.detail("g", "m1")
        #expect(detail.read.isEmpty)
        #expect(detail.delivered.map(\.user) == ["B", "C"])
        h.read("g", "B", "m1")
        detail = h.detail("g", "m1")
        #expect(detail.read.map(\.user) == ["B"])
        #expect(detail.read.first?.readAt == Timestamp(milliseconds: h.now))
        #expect(detail.delivered.map(\.user) == ["C"])
    }

    @Test func procedure2OthersMessagesShowNoReceiptText() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "B")
        h.read("g", "A", nil)
        h.read("g", "C", nil)
        #expect(h.text("g", "m1", viewer: "A") == "")
        #expect(h.text("g", "m1", viewer: "B") == "Read by all users")
        // The sheet of B's message never lists B.
        let detail = h.detail("g", "m1")
        #expect(detail.read.map(\.user).sorted() == ["A", "C"])
        #expect(!(detail.read + detail.delivered + detail.notDelivered).contains { $0.user == "B" })
    }

    @Test func procedure3ReadSectionSortedMostRecentFirst() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        let bTime = h.now
        h.apply(.read(conversation: "g", user: "C", message: nil), after: 5 * 60_000)
        let read = h.detail("g", "m1").read
        #expect(read.map(\.user) == ["C", "B"])
        #expect(read.map(\.readAt) == [Timestamp(milliseconds: bTime + 5 * 60_000), Timestamp(milliseconds: bTime)])
    }

    @Test func procedure4DeliveredSection() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D", "E"])
        h.send("g", "m1", from: "A")
        for user in ["D", "E"] { h.deliver("g", user, "m1") }
        h.read("g", "B", nil)
        h.read("g", "C", nil)
        let detail = h.detail("g", "m1")
        #expect(detail.read.map(\.user) == ["C", "B"])
        #expect(detail.delivered.map(\.user) == ["D", "E"])
        #expect(detail.notDelivered.isEmpty)
        #expect(detail.status.readCount == 2 && detail.status.recipientCount == 4)
    }

    @Test func procedure5RealTimeUpdatesArePublished() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        let change = h.accept(.read(conversation: "g", user: "B", message: nil)).changes
        #expect(change.count == 1)
        #expect(change.first?.message == "m1")
        #expect(change.first?.readCount == 1)
        #expect(change.first?.status == .readBySome)
        #expect(change.first == h.status("g", "m1"))
    }

    @Test func procedure6SystemMessagesHaveNoReadReceipts() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "created", from: "A", system: true)
        h.read("g", "B", "created")
        let detail = h.detail("g", "created")
        #expect(detail.status.status == ReceiptStatus.none)
        #expect(detail.status.isSystem)
        #expect(detail.read.isEmpty && detail.delivered.isEmpty && detail.notDelivered.isEmpty)
        #expect(h.text("g", "created") == "")
        // A system message is never the sender's "last message" and never unread.
        #expect(h.engine.lastSent(conversation: "g", sender: "A") == nil)
        #expect(h.unread("C", "g").unread == 0)
    }

    @Test func procedure7OneOnOneChatCompatibility() {
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        h.send("ab", "m1", from: "A")
        h.deliver("ab", "B", "m1")
        #expect(h.status("ab", "m1").status == .delivered)
        h.read("ab", "B", nil)
        #expect(h.status("ab", "m1").status == .read)
        #expect(h.engine.kind(of: "ab") == .direct)
        // Group statuses never appear in a direct conversation.
        #expect(!h.published.contains { [.readBySome, .readByAll].contains($0.status) })
    }

    @Test func procedure8OfflineReadWithClientTimeClamped() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        let sentAt = h.now
        // Read offline 10 s after it arrived, synced a minute later: the client time is honoured.
        h.apply(.read(conversation: "g", user: "B", message: "m1"), clientTime: sentAt + 10_000, after: 60_000)
        #expect(h.detail("g", "m1").read.first?.readAt == Timestamp(milliseconds: sentAt + 10_000))
        // A client clock behind the message's send time is clamped up to it...
        h.apply(.read(conversation: "g", user: "C", message: "m1"), clientTime: sentAt - 99_000)
        #expect(h.detail("g", "m1").read.first { $0.user == "C" }?.readAt == Timestamp(milliseconds: sentAt))
        // ...and one in the future down to now.
        h.send("g", "m2", from: "A")
        h.apply(.read(conversation: "g", user: "B", message: "m2"), clientTime: h.now + 3_600_000)
        #expect(h.detail("g", "m2").read.first?.readAt == Timestamp(milliseconds: h.now))
    }

    @Test func edgeCaseAllReadEmptiesDeliveredNoneReadEmptiesRead() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.deliver("g", "B", "m1")
        h.deliver("g", "C", "m1")
        #expect(h.detail("g", "m1").read.isEmpty)
        h.read("g", "B", nil)
        h.read("g", "C", nil)
        #expect(h.detail("g", "m1").delivered.isEmpty)
        #expect(h.detail("g", "m1").read.count == 2)
    }

    @Test func edgeCaseParticipantRemovedLeavesTheSheet() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        h.deliver("g", "C", "m1")
        h.accept(.memberLeft(conversation: "g", user: "C"))
        let detail = h.detail("g", "m1")
        #expect(detail.delivered.isEmpty)
        #expect(detail.notDelivered.map(\.user) == ["D"])
        #expect(detail.status.recipientCount == 2)
    }

    @Test func edgeCaseDeletedMessageKeepsReceipts() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        h.accept(.messageDeleted(conversation: "g", message: "m1"))
        #expect(h.detail("g", "m1").read.map(\.user) == ["B"])
        #expect(h.detail("g", "m1").status.isDeleted)
    }

    @Test func edgeCaseDeletedUserFlagged() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        h.accept(.userDeleted(user: "B"))
        h.accept(.userDeleted(user: "C"))
        let detail = h.detail("g", "m1")
        #expect(detail.read.map(\.user) == ["B"])
        #expect(detail.read.first?.isUserDeleted == true)
        #expect(detail.read.first?.hasLeft == false)
        // C never read: deleted, C drops out of the count and the sheet.
        #expect(detail.status.recipientCount == 2)
        #expect(detail.notDelivered.map(\.user) == ["D"])
        #expect(h.rejection(.read(conversation: "g", user: "B", message: nil)) == .userDeleted)
        #expect(
            h.rejection(.messageSent(conversation: "g", message: "x", sender: "B", isSystem: false)) == .userDeleted
        )
        #expect(h.rejection(.memberJoined(conversation: "g", user: "C")) == .userDeleted)
        #expect(h.rejection(.receiptPrivacy(user: "C", shareReads: false)) == .userDeleted)
        // D reads: every counted recipient has read.
        h.read("g", "D", nil)
        #expect(h.status("g", "m1").status == .readByAll)
    }

    @Test func edgeCaseSenderExcludedAndDetailUnknownMessage() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.send("g", "m1", from: "A")
        let everyone = h.detail("g", "m1").notDelivered.map(\.user)
        #expect(everyone == ["B"])
        #expect(h.engine.readDetail(conversation: "g", message: "unknown") == nil)
        #expect(h.engine.readDetail(conversation: "unknown", message: "m1") == nil)
    }
}
