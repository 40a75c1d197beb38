import ReceiptsCore
import Testing

/// README, "Messages with nobody left to read them": counts drop to 0, the status stays.
struct NobodyLeftTests {
    @Test func everyRecipientLeftBeforeAnyDelivery() {
        var h = EngineHarness()
        h.group("g", ["alice", "bob", "carol"])
        h.send("g", "m1", from: "alice")
        h.accept(.memberLeft(conversation: "g", user: "bob"))
        h.accept(.memberLeft(conversation: "g", user: "carol"))
        let status = h.status("g", "m1")
        #expect(status.status == .notDelivered)
        #expect([status.recipientCount, status.deliveredCount, status.readCount] == [0, 0, 0])
        #expect(h.text("g", "m1") == "")
        #expect(Self.lines(h.detail("g", "m1")).isEmpty)
    }

    @Test func theLastRecipientLeftAfterItReachedEveryoneCounted() {
        var h = EngineHarness()
        h.group("g", ["alice", "bob", "carol"])
        h.send("g", "m1", from: "alice")
        h.deliver("g", "bob", "m1")
        h.accept(.memberLeft(conversation: "g", user: "carol"))
        #expect(h.status("g", "m1").status == .delivered)
        h.accept(.memberLeft(conversation: "g", user: "bob"))
        let status = h.status("g", "m1")
        #expect(status.status == .delivered, "statuses never go down")
        #expect([status.recipientCount, status.deliveredCount, status.readCount] == [0, 0, 0])
        #expect(h.text("g", "m1") == "Delivered")
    }

    static func lines(_ detail: ReadDetail) -> [RecipientReceipt] {
        detail.read + detail.delivered + detail.notDelivered
    }
}
