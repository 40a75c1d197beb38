import ReceiptsCore
import Testing

@testable import ReceiptsService

/// The followed user-topic prefixes, as an XPUB socket reports them.
struct UserTopicSubscriptionsTests {
    static func message(_ kind: UInt8, _ prefix: String) -> [UInt8] {
        [kind] + Array(prefix.utf8)
    }

    /// A user's topic frame, as the worker publishes it.
    static func topic(_ user: String) -> [UInt8] {
        Array(Partitioning.exactUserTopic(for: user).utf8)
    }

    @discardableResult
    static func take(_ set: inout UserTopicSubscriptions, _ kind: UInt8, _ prefix: String) -> Bool {
        message(kind, prefix).withUnsafeBytes { set.take($0) }
    }

    @Test func anExactUserTopicAPartitionAndAllUsersAreFollowedUntilUnsubscribed() {
        var set = UserTopicSubscriptions()
        #expect(!set.follows(Self.topic("dana")))
        #expect(Self.take(&set, 1, Partitioning.userTopic(for: "dana")))
        #expect(set.follows(Self.topic("dana")))
        #expect(!set.follows(Self.topic("dan")), "an exact topic is no prefix of a shorter one")
        #expect(!set.follows(Self.topic("erin")))
        let partition = "u:" + Partitioning.hexPartition(of: "erin") + ":"
        #expect(Self.take(&set, 1, partition))
        #expect(set.follows(Self.topic("erin")))
        #expect(Self.take(&set, 0, Partitioning.userTopic(for: "dana")))
        #expect(!set.follows(Self.topic("dana")))
        #expect(Self.take(&set, 1, "u:"))
        #expect(set.follows(Self.topic("dana")) && set.follows(Self.topic("anyone")))
        #expect(set.count == 2)
        // A subscription to a whole frame follows that user only.
        var exact = UserTopicSubscriptions()
        #expect(Self.take(&exact, 1, Partitioning.exactUserTopic(for: "dan")))
        #expect(exact.follows(Self.topic("dan")))
        #expect(!exact.follows(Array(Partitioning.userTopic(for: "dan").utf8) + Array("a\u{0}".utf8)))
    }

    @Test func everythingFollowsUsersButConversationPrefixesAndOddMessagesAreIgnored() {
        var set = UserTopicSubscriptions()
        #expect(!Self.take(&set, 1, "03fa:"), "a conversation partition never matches a user topic")
        #expect(!Self.take(&set, 1, "0"))
        #expect(!set.follows(Self.topic("dana")))
        #expect(!Self.take(&set, 2, "u:"), "neither a subscription nor an unsubscription")
        #expect(![UInt8]().withUnsafeBytes { set.take($0) }, "an empty message")
        #expect(!Self.take(&set, 0, "u:"), "an unsubscription of a prefix never followed")
        #expect(Self.take(&set, 1, ""))
        #expect(!Self.take(&set, 1, ""), "a repeat changes nothing")
        #expect(set.follows(Self.topic("dana")))
        #expect(Self.take(&set, 0, ""))
        #expect(!set.follows(Self.topic("dana")) && set.count == 0)
    }

    /// Which subscriptions name one user (the worker announces that user's state to them).
    @Test func aSubscriptionNamesOneUserOnlyWhenItIsThatUsersWholeTopic() {
        let digits = Partitioning.hexPartition(of: "dana")
        let other = digits == "0000" ? "0001" : "0000"
        let table: [(UInt8, String, String?)] = [
            (1, Partitioning.exactUserTopic(for: "dana"), "dana"),
            (1, Partitioning.userTopic(for: "dana"), "dana"),
            (1, Partitioning.exactUserTopic(for: "a:b"), "a:b"),
            (0, Partitioning.exactUserTopic(for: "dana"), nil),
            (1, "u:\(other):dana", nil),
            (1, "u:\(digits):", nil),
            (1, "u:", nil),
            (1, "", nil),
            (1, Partitioning.exactTopic(for: "dana"), nil),
        ]
        for (kind, prefix, user) in table {
            let named = Self.message(kind, prefix).withUnsafeBytes { UserTopicSubscriptions.user(subscribedBy: $0) }
            #expect(named == user, "\(kind) \(prefix)")
        }
    }
}
