import ReceiptsCore
import Testing

/// Retention drops old messages and keeps every answer about the retained ones right.
struct RetentionTests {
    @Test func retentionKeepsAnswersRight() throws {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D"])
        for i in 1...6 { h.send("g", "m\(i)", from: i % 2 == 0 ? "A" : "B") }
        let cutoff = Timestamp(milliseconds: h.now - 2500)  // keeps m4...m6
        h.read("g", "C", "m2")
        h.deliver("g", "D", "m5")
        h.read("g", "B", "m4")
        h.accept(.memberLeft(conversation: "g", user: "D"))
        let before = (4...6).map { h.status("g", "m\($0)") }
        let beforeDetails = (4...6).map { h.detail("g", "m\($0)") }
        let beforeUnread = ["A", "B", "C"].map { h.unread($0, "g") }
        #expect(h.engine.expireMessages(sentBefore: cutoff) == 3)
        #expect(h.engine.counters.messages == 3)
        #expect(h.engine.counters.expiredMessages == 3)
        #expect(h.engine.status(conversation: "g", message: "m1") == nil)
        #expect((4...6).map { h.status("g", "m\($0)") } == before)
        #expect((4...6).map { h.detail("g", "m\($0)") } == beforeDetails)
        // Unread counts of retained messages are unchanged (C had read m1, m2; m3 expired).
        let afterUnread = ["A", "B", "C"].map { h.unread($0, "g") }
        #expect(afterUnread.map(\.readUpTo) == beforeUnread.map(\.readUpTo))
        #expect(afterUnread.map(\.unread) == [1, 1, 3])
        // Receipts and sends keep working and agree with a snapshot round trip.
        h.read("g", "C", nil)
        h.send("g", "m7", from: "C")
        h.read("g", "A", nil)
        #expect(h.status("g", "m6").status == .readBySome)
        #expect(h.status("g", "m5").readCount == 2)
        #expect(h.detail("g", "m4").read.map(\.user) == ["C", "B"])
        let restored = try ReceiptEngine(restoringFrom: h.engine.encodedState(), configuration: .init())
        #expect(restored.snapshot(conversation: "g", limit: 0) == h.engine.snapshot(conversation: "g", limit: 0))
        // Expiring everything, then sending again, continues the sequence.
        #expect(h.engine.expireMessages(sentBefore: Timestamp(milliseconds: h.now + 1)) == 4)
        #expect(h.engine.lastSent(conversation: "g", sender: "A") == nil)
        h.send("g", "m8", from: "A")
        #expect(h.status("g", "m8").sequence == 8)
        #expect(h.unread("C", "g").unread == 1)
    }

    @Test func receiptsLongAfterSendingKeepExactTimes() throws {
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        h.send("ab", "m1", from: "A")
        h.send("ab", "m2", from: "A")
        let fiftyDays: Int64 = 50 * 86_400_000
        h.apply(.delivered(conversation: "ab", user: "B", message: "m1"), after: fiftyDays)
        let deliveredAt = h.now
        h.apply(.read(conversation: "ab", user: "B", message: "m2"), after: fiftyDays)
        #expect(h.status("ab", "m1").deliveredAt == Timestamp(milliseconds: deliveredAt))
        #expect(h.status("ab", "m2").readAt == Timestamp(milliseconds: h.now))
        let restored = try ReceiptEngine(restoringFrom: h.engine.encodedState(), configuration: .init())
        #expect(restored.status(conversation: "ab", message: "m1") == h.status("ab", "m1"))
        #expect(restored.status(conversation: "ab", message: "m2") == h.status("ab", "m2"))
        // Expiring the first keeps the second's far time.
        let cutoff = h.status("ab", "m2").sentAt
        #expect(h.engine.expireMessages(sentBefore: cutoff) == 1)
        #expect(h.status("ab", "m2").readAt == Timestamp(milliseconds: h.now))
    }

    /// Send times are kept in 48 bits inline; times beyond that (and the sentinel value itself)
    /// must still come back exactly, through statuses, receipts, snapshots and expiry.
    @Test(arguments: [Int64.min + 5, -(1 << 47), -(1 << 47) + 1, (1 << 47) - 1, 1 << 47, Int64.max - 5_000] as [Int64])
    func sendTimesBeyond48BitsStayExact(sentAt: Int64) throws {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.now = sentAt
        h.accept(.messageSent(conversation: "g", message: "m1", sender: "A", isSystem: false), after: 0)
        h.deliver("g", "C", "m1")
        h.read("g", "B", "m1")
        let status = h.status("g", "m1")
        #expect(status.sentAt == Timestamp(milliseconds: sentAt))
        #expect(status.readAt == Timestamp(milliseconds: sentAt + 2000))
        #expect(status.deliveredAt == Timestamp(milliseconds: sentAt + 2000))
        #expect(h.detail("g", "m1").read.map(\.readAt) == [Timestamp(milliseconds: sentAt + 2000)])
        let restored = try ReceiptEngine(restoringFrom: h.engine.encodedState(), configuration: .init())
        #expect(restored.status(conversation: "g", message: "m1") == status)
        #expect(restored.encodedState() == h.engine.encodedState())
        #expect(h.engine.expireMessages(sentBefore: Timestamp(milliseconds: sentAt)) == 0)
        #expect(h.engine.expireMessages(sentBefore: Timestamp(milliseconds: sentAt + 1)) == 1)
        #expect(h.engine.status(conversation: "g", message: "m1") == nil)
    }

    @Test func expiringNothingIsANoOp() {
        var h = EngineHarness()
        h.group("g", ["A", "B"])
        h.send("g", "m1", from: "A")
        let state = h.engine.encodedState()
        #expect(h.engine.expireMessages(sentBefore: Timestamp(milliseconds: 0)) == 0)
        #expect(h.engine.encodedState() == state)
    }
}
