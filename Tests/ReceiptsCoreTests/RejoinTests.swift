import ReceiptsCore
import Testing

/// A member who leaves and joins again (issue 30, defect 1): their badge counts the messages of
/// each of their memberships that they had not read, and a read of anything from before their
/// return clears it as far as it reaches, adding no receipt for others to see.
struct RejoinTests {
    /// alice, bob and carol in g; alice sends m1; bob reads m1; alice sends m2 and m3; bob
    /// leaves; alice sends m4; bob joins again.
    static func rejoined() -> EngineHarness {
        var h = EngineHarness()
        h.group("g", ["alice", "bob", "carol"])
        h.send("g", "m1", from: "alice")
        h.read("g", "bob", "m1")
        h.send("g", "m2", from: "alice")
        h.send("g", "m3", from: "alice")
        h.accept(.memberLeft(conversation: "g", user: "bob"))
        h.send("g", "m4", from: "alice")
        h.accept(.memberJoined(conversation: "g", user: "bob"))
        return h
    }

    @Test func aRejoinedMemberCountsWhatTheyHadNotReadBeforeLeaving() {
        let h = Self.rejoined()
        #expect(h.unread("bob", "g") == UnreadCount(conversation: "g", unread: 2, isMarkedUnread: false, readUpTo: 1))
    }

    /// The read named, and what bob's badge shows after it.
    @Test(arguments: [
        ("m2", 1, 2 as UInt64),
        ("m3", 0, 3),
        ("m4", 0, 4),
        ("m1", 2, 1),
    ])
    func aReadOfHistoryClearsTheBadgeAsFarAsItReaches(message: String, unread: Int, readUpTo: UInt64) {
        var h = Self.rejoined()
        let before = (2...4).map { h.status("g", "m\($0)") }
        let result = h.accept(.read(conversation: "g", user: "bob", message: message))
        let expected = UnreadCount(conversation: "g", unread: unread, isMarkedUnread: false, readUpTo: readUpTo)
        #expect(h.unread("bob", "g") == expected)
        // One read state for bob when the badge moved, none when it did not.
        #expect(result.readStates.map(\.state) == (readUpTo > 1 ? [expected] : []))
        // Nobody else sees a receipt: the statuses of the messages from before bob's return stay.
        #expect(result.changes.isEmpty)
        #expect((2...4).map { h.status("g", "m\($0)") } == before)
        #expect(h.detail("g", "m3").read.isEmpty)
    }

    @Test func aRejoinedMembersReadClearsTheMarkAndMessagesAfterTheReturnCountAgain() {
        var h = Self.rejoined()
        h.accept(.markedUnread(conversation: "g", user: "bob"))
        h.send("g", "m5", from: "alice")
        h.read("g", "bob", "m4")
        #expect(h.unread("bob", "g") == UnreadCount(conversation: "g", unread: 1, isMarkedUnread: false, readUpTo: 4))
        // m5 is bob's as a recipient again: his read of it is a receipt.
        h.read("g", "bob", "m5")
        #expect(h.unread("bob", "g") == UnreadCount(conversation: "g", unread: 0, isMarkedUnread: false, readUpTo: 5))
        #expect(h.detail("g", "m5").read.map(\.user) == ["bob"])
    }

    @Test func whatStaysRefused() {
        var h = Self.rejoined()
        // A delivery of history adds nothing bob could be shown: still refused.
        #expect(h.rejection(.delivered(conversation: "g", user: "bob", message: "m3")) == .notARecipient)
        // Once bob leaves again, his reads of the conversation are refused as before.
        h.accept(.memberLeft(conversation: "g", user: "bob"))
        #expect(h.rejection(.read(conversation: "g", user: "bob", message: "m3")) == .notARecipient, "left again")
        // A member who never left cannot read what was sent before they joined.
        h.accept(.memberJoined(conversation: "g", user: "dave"))
        #expect(h.rejection(.read(conversation: "g", user: "dave", message: "m3")) == .notARecipient)
    }
}
