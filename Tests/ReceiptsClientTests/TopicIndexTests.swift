import ReceiptsCore
import Testing

@testable import ReceiptsClient

/// How subscriptions share the SUB sockets' filters, and which subscriptions an update is for.
struct TopicIndexTests {
    private static func subscribers(_ index: TopicIndex, _ topic: String) -> Set<UInt64> {
        Set(Array(topic.utf8).withUnsafeBytes { index.subscribers(of: $0) })
    }

    @Test func aFilterStaysWhileAnySubscriptionUsesIt() {
        var index = TopicIndex()
        let topic = SubscriptionTopic.conversation("c1")
        #expect(index.add(1, topic) == topic.filters, "the first subscription subscribes the sockets")
        #expect(index.add(2, topic).isEmpty)
        #expect(index.remove(1, topic).isEmpty, "one cancel of two keeps the filter")
        #expect(Array(index.filters) == topic.filters)
        #expect(index.remove(2, topic) == topic.filters)
        #expect(index.filters.isEmpty)
        #expect(index.remove(2, topic).isEmpty, "a second cancel changes nothing")
    }

    @Test func aConversationAndAPrefixWithTheSameFilterShareIt() {
        var index = TopicIndex()
        let conversation = SubscriptionTopic.conversation("c1")
        let prefix = SubscriptionTopic.prefix(Partitioning.exactTopic(for: "c1"))
        #expect(!index.add(1, conversation).isEmpty)
        #expect(index.add(2, prefix).isEmpty)
        #expect(index.remove(1, conversation).isEmpty)
        #expect(index.remove(2, prefix) == prefix.filters)
    }

    @Test func aConversationTakesItsExactTopicAndAPrefixEveryTopicUnderIt() {
        var index = TopicIndex()
        _ = index.add(1, SubscriptionTopic.conversation("c1"))
        _ = index.add(2, SubscriptionTopic.conversation("c1"))
        _ = index.add(3, SubscriptionTopic.prefix(Partitioning.topic(for: "c1")))
        _ = index.add(4, SubscriptionTopic.everything)
        _ = index.add(5, SubscriptionTopic.conversation("c2"))
        let c1 = Partitioning.exactTopic(for: "c1")
        #expect(Self.subscribers(index, c1) == [1, 2, 3, 4])
        #expect(
            Self.subscribers(index, Partitioning.topic(for: "c1") + "0\u{0}") == [3, 4],
            "a frame of c10 with c1's digits is not c1's, but starts with its topic"
        )
        #expect(Self.subscribers(index, Partitioning.exactTopic(for: "c2")) == [4, 5])
        #expect(
            Self.subscribers(index, Partitioning.exactUserTopic(for: "c1")).isEmpty,
            "everything means every conversation"
        )
        _ = index.remove(4, SubscriptionTopic.everything)
        #expect(Self.subscribers(index, "ffff:nobody").isEmpty)
    }

    @Test func everythingIsTheSixteenConversationPrefixesAndAUserTopicIsExact() {
        var index = TopicIndex()
        #expect(index.add(1, SubscriptionTopic.everything).count == 16)
        #expect(index.add(2, ReadStateTopic.user("dana")) == [Partitioning.exactUserTopic(for: "dana")])
        #expect(Self.subscribers(index, Partitioning.exactUserTopic(for: "dana")) == [2])
        #expect(Self.subscribers(index, Partitioning.userTopic(for: "dana") + "x\u{0}").isEmpty)
        #expect(index.remove(1, SubscriptionTopic.everything).count == 16)
        #expect(Array(index.filters) == [Partitioning.exactUserTopic(for: "dana")])
    }
}
