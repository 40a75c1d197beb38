import ReceiptsCore
import Testing

/// Seed 000 ("Read Receipts PRD"): its testing guide, step by step, and its seven edge cases.
struct SeedReadReceiptsPRDTests {
    @Test func oneOnOneChatTest() {
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        // 1. User A sends message to User B. 2. A sees nothing initially.
        let sent = h.accept(.messageSent(conversation: "ab", message: "m1", sender: "A", isSystem: false))
        #expect(sent.changes.map(\.status) == [.notDelivered])
        #expect(h.text("ab", "m1") == "")
        // 3. B's app receives the message in the background. 4. A sees "Delivered".
        h.deliver("ab", "B", "m1")
        #expect(h.status("ab", "m1").status == .delivered)
        #expect(h.text("ab", "m1") == "Delivered")
        // 5. B opens the chat. 6. A sees "Read at <time>".
        h.read("ab", "B", nil)
        let status = h.status("ab", "m1")
        #expect(status.status == .read)
        #expect(status.readAt == Timestamp(milliseconds: h.now))
        #expect(h.text("ab", "m1").hasPrefix("Read at "))
    }

    @Test func groupChatTest() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D"])
        // 1. A sends to the group. 2. A sees nothing.
        h.send("g", "m1", from: "A")
        #expect(h.text("g", "m1") == "")
        // 3. All users receive it: nothing until the last one has it.
        h.deliver("g", "B", "m1")
        h.deliver("g", "C", "m1")
        #expect(h.text("g", "m1") == "")
        h.deliver("g", "D", "m1")
        // 4. A sees "Delivered".
        #expect(h.text("g", "m1") == "Delivered")
        #expect(h.status("g", "m1").deliveredAt == Timestamp(milliseconds: h.now))
        // 5. B opens the chat. 6. "Read by some users".
        h.read("g", "B", nil)
        #expect(h.status("g", "m1").status == .readBySome)
        #expect(h.text("g", "m1") == "Read by some users")
        #expect(h.text("g", "m1", prefersCounts: true) == "Read by 1 of 3")
        // 7. C and D open the chat. 8. "Read by all users".
        h.read("g", "C", nil)
        #expect(h.text("g", "m1") == "Read by some users")
        h.read("g", "D", nil)
        #expect(h.status("g", "m1").status == .readByAll)
        #expect(h.text("g", "m1") == "Read by all users")
    }

    @Test func edgeCaseOfflineMessagesShowNothingUntilDelivered() {
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        h.send("ab", "m1", from: "A")
        h.send("ab", "m2", from: "A")
        #expect(h.text("ab", "m2") == "")
        // B comes back online much later: one delivery covers everything.
        h.deliver("ab", "B", "m2")
        #expect(h.text("ab", "m1") == "Delivered")
        #expect(h.text("ab", "m2") == "Delivered")
    }

    @Test func edgeCaseFailedAndPendingMessagesHaveNoReceipts() {
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        // A failed or still-pending message never reached the service: it does not exist, and a
        // receipt naming it waits for it, then is dropped and counted.
        #expect(h.engine.status(conversation: "ab", message: "failed") == nil)
        #expect(h.engine.readDetail(conversation: "ab", message: "failed") == nil)
        #expect(h.engine.lastSent(conversation: "ab", sender: "A") == nil)
        let held = h.apply(.read(conversation: "ab", user: "B", message: "failed"))
        #expect(held.outcome == .accepted(held: true))
        h.send("ab", "m1", from: "A")
        h.apply(.memberJoined(conversation: "ab", user: "A"), after: 120_000)
        #expect(h.engine.counters.droppedPendingReceipts == 1)
        #expect(h.status("ab", "m1").status == .notDelivered)
    }

    @Test func edgeCaseSelfMessagesHaveNoReceipts() {
        var h = EngineHarness()
        h.group("notes", ["A"])
        let sent = h.accept(.messageSent(conversation: "notes", message: "m1", sender: "A", isSystem: false))
        #expect(sent.changes.map(\.status) == [ReceiptStatus.none])
        #expect(h.status("notes", "m1").recipientCount == 0)
        #expect(h.text("notes", "m1") == "")
        // A member who joins later does not make it a message with recipients.
        h.accept(.memberJoined(conversation: "notes", user: "B"))
        #expect(h.rejection(.read(conversation: "notes", user: "B", message: "m1")) == .notARecipient)
        #expect(h.status("notes", "m1").status == ReceiptStatus.none)
        // The sender cannot add receipts to their own message.
        #expect(h.rejection(.read(conversation: "notes", user: "A", message: "m1")) == .notARecipient)
    }

    @Test func edgeCaseImageMessagesFollowTheSameRules() {
        // The service does not know content types: an image message is a message.
        var h = EngineHarness()
        h.direct("ab", "A", "B")
        h.send("ab", "image-1", from: "A")
        h.deliver("ab", "B", "image-1")
        #expect(h.text("ab", "image-1") == "Delivered")
        h.read("ab", "B", "image-1")
        #expect(h.status("ab", "image-1").status == .read)
    }

    @Test func edgeCaseGroupUserLeavesStillCounted() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        h.accept(.memberLeft(conversation: "g", user: "B"))
        // B's read still counts after leaving.
        let status = h.status("g", "m1")
        #expect(status.recipientCount == 2)
        #expect(status.readCount == 1)
        #expect(status.status == .readBySome)
        #expect(h.detail("g", "m1").read.map(\.user) == ["B"])
        #expect(h.detail("g", "m1").read.first?.hasLeft == true)
        #expect(h.detail("g", "m1").notDelivered.map(\.user) == ["C"])
        h.read("g", "C", nil)
        #expect(h.status("g", "m1").status == .readByAll)
    }

    @Test func edgeCaseEditedAndDeletedMessagesPreserveReceipts() {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        h.send("g", "m1", from: "A")
        h.read("g", "B", nil)
        let before = h.status("g", "m1")
        let edited = h.accept(.messageEdited(conversation: "g", message: "m1"))
        #expect(edited.changes.count == 1)
        #expect(edited.changes.first?.isEdited == true)
        let deleted = h.accept(.messageDeleted(conversation: "g", message: "m1"))
        #expect(deleted.changes.first?.isDeleted == true)
        let after = h.status("g", "m1")
        #expect(after.status == before.status)
        #expect(after.readCount == before.readCount)
        #expect(after.readAt == before.readAt)
        #expect(h.rejection(.messageEdited(conversation: "g", message: "nope")) == .unknownMessage)
        #expect(h.rejection(.messageDeleted(conversation: "g", message: "nope")) == .unknownMessage)
        // Receipts keep working on an edited message.
        h.read("g", "C", nil)
        #expect(h.status("g", "m1").status == .readByAll)
    }
}
