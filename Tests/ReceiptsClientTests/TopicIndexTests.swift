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
        #expect(index.add(1, topic) == topic.filter, "the first subscription subscribes the sockets")
        #expect(index.add(2, topic) == nil)
        #expect(index.remove(1, topic) == nil, "one cancel of two keeps the filter")
        #expect(Array(index.filters) == [topic.filter])
        #expect(index.remove(2, topic) == topic.filter)
        #expect(index.filters.isEmpty)
        #expect(index.remove(2, topic) == nil, "a second cancel changes nothing")
    }

    @Test func aConversationAndAPrefixWithTheSameFilterShareIt() {
        var index = TopicIndex()
        let conversation = SubscriptionTopic.conversation("c1")
        let prefix = SubscriptionTopic.prefix(Partitioning.topic(for: "c1"))
        #expect(index.add(1, conversation) != nil)
        #expect(index.add(2, prefix) == nil)
        #expect(index.remove(1, conversation) == nil)
        #expect(index.remove(2, prefix) == prefix.filter)
    }

    @Test func aConversationTakesItsExactTopicAndAPrefixEveryTopicUnderIt() {
        var index = TopicIndex()
        _ = index.add(1, SubscriptionTopic.conversation("c1"))
        _ = index.add(2, SubscriptionTopic.conversation("c1"))
        _ = index.add(3, SubscriptionTopic.prefix(Partitioning.topic(for: "c1")))
        _ = index.add(4, SubscriptionTopic.everything)
        _ = index.add(5, SubscriptionTopic.conversation("c2"))
        let c1 = Partitioning.topic(for: "c1")
        #expect(Self.subscribers(index, c1) == [1, 2, 3, 4])
        #expect(Self.subscribers(index, c1 + "0") == [3, 4], "c10 is not c1, but starts with its topic")
        #expect(Self.subscribers(index, Partitioning.topic(for: "c2")) == [4, 5])
        _ = index.remove(4, SubscriptionTopic.everything)
        #expect(Self.subscribers(index, "ffff:nobody").isEmpty)
    }
}
