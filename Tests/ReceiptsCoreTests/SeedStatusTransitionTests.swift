import ReceiptsCore
import Testing

/// Seed 002 ("Read Receipts Implementation Pattern"): status transitions never downgrade, and
/// group reads as "Read by X of Y".
struct SeedStatusTransitionTests {
    @Test func lateDeliveryAfterReadNeverDowngrades() {
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        h.send("ab", "m1", from: "A")
        h.send("ab", "m2", from: "A")
        h.read("ab", "B", "m2")
        let read = h.status("ab", "m1")
        #expect(read.status == .read)
        // A delivery that arrives late (different gateway path) changes nothing.
        let late = h.accept(.delivered(conversation: "ab", user: "B", message: "m1"))
        #expect(late.changes.isEmpty)
        #expect(h.status("ab", "m1") == read)
        // An older read neither.
        #expect(h.accept(.read(conversation: "ab", user: "B", message: "m1")).changes.isEmpty)
    }

    @Test func groupStatusesOnlyMoveUp() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D"])
        h.send("g", "m1", from: "A")
        var seen: [ReceiptStatus] = [h.status("g", "m1").status]
        for (user, isRead) in [("B", false), ("C", true), ("D", false), ("B", true), ("D", true), ("C", false)] {
            if isRead { h.read("g", user, "m1") } else { h.deliver("g", user, "m1") }
            seen.append(h.status("g", "m1").status)
        }
        #expect(seen == [.notDelivered, .notDelivered, .readBySome, .readBySome, .readBySome, .readByAll, .readByAll])
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 <= $1 })
    }

    @Test func timestampsKeepTheFirstTime() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        let firstRead = h.status("g", "m1").readAt
        h.send("g", "m2", from: "A")
        h.read("g", "B", nil)
        h.read("g", "C", nil)
        #expect(h.status("g", "m1").readAt == firstRead)
        #expect(h.detail("g", "m1").read.first { $0.user == "B" }?.readAt == firstRead)
    }

    @Test func readByXOfY() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D", "E", "F"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        h.read("g", "C", nil)
        #expect(h.text("g", "m1", prefersCounts: true) == "Read by 2 of 5")
        #expect(h.text("g", "m1") == "Read by some users")
        // Non-readers who leave drop out of Y.
        h.accept(.memberLeft(conversation: "g", user: "F"))
        #expect(h.text("g", "m1", prefersCounts: true) == "Read by 2 of 4")
        h.accept(.memberLeft(conversation: "g", user: "E"))
        h.accept(.memberLeft(conversation: "g", user: "D"))
        // The last non-reader left: every counted recipient read.
        #expect(h.status("g", "m1").status == .readByAll)
        #expect(h.text("g", "m1", prefersCounts: true) == "Read by all users")
    }

    @Test func readImpliesDelivered() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        h.read("g", "C", nil)
        let status = h.status("g", "m1")
        #expect(status.deliveredCount == 2)
        #expect(status.deliveredAt == Timestamp(milliseconds: h.now))
        #expect(status.status == .readByAll)
    }
}
