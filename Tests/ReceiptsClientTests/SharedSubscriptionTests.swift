import Foundation
import Logging
import ReceiptsCore
import ReceiptsWire
import Synchronization
import Testing
import ZeroMQ

@testable import ReceiptsClient

/// Subscriptions sharing the client's SUB socket, against a PUB socket the test publishes on
/// as a worker would: each subscription gets the updates of its topic, and a cancelled one
/// does not take the topic away from another that follows it too.
struct SharedSubscriptionTests {
    /// The sequences each subscription received, by subscription.
    final class Seen: Sendable {
        private let state = Mutex<[Int: [UInt64]]>([:])

        func append(_ sequence: UInt64, to subscription: Int) {
            state.withLock { $0[subscription, default: []].append(sequence) }
        }

        /// The sequences one subscription received.
        func of(_ subscription: Int) -> [UInt64] {
            state.withLock { $0[subscription] ?? [] }
        }
    }

    private static func update(_ sequence: UInt64, in conversation: String) -> StatusUpdate {
        StatusUpdate(
            publisherRun: 1,
            sequence: sequence,
            status: MessageStatus(
                conversation: conversation,
                message: "m\(sequence)",
                sequence: sequence,
                sender: "a",
                sentAt: Timestamp(milliseconds: 1000),
                status: .notDelivered,
                recipientCount: 1,
                deliveredCount: 0,
                readCount: 0,
                deliveredAt: nil,
                readAt: nil,
                isSystem: false,
                isEdited: false,
                isDeleted: false
            )
        )
    }

    /// Publishes updates of `conversation` from `first` on, one every 20 ms, until `received`
    /// says the subscribers have what they wait for, or both 20 seconds and 200 updates passed
    /// (counted in updates too: a test process starved of threads may wake after 20 s having
    /// sent only a few, all before the subscriptions reached the socket), and at most 60 s.
    private static func publish(
        _ publisher: ZMQSocket,
        _ conversation: String,
        from first: UInt64,
        until received: @escaping @Sendable () -> Bool
    ) async throws -> UInt64 {
        var sequence = first
        let start = ContinuousClock.now
        func givenUp() -> Bool {
            let waited = ContinuousClock.now - start
            return waited > .seconds(60) || (waited > .seconds(20) && sequence - first >= 200)
        }
        while !received(), !givenUp() {
            _ = try publisher.send(
                [Array(Partitioning.exactTopic(for: conversation).utf8), update(sequence, in: conversation).encode()]
            )
            sequence += 1
            try await Task.sleep(for: .milliseconds(20))
        }
        return sequence
    }

    @Test func aCancelledSubscriptionLeavesTheTopicToTheOthers() async throws {
        let directory = NSTemporaryDirectory() + "shared-sub-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let context = try ZMQContext()
        let publisher = try ZMQSocket(context: context, type: .pub)
        defer {
            publisher.close()
            context.terminate()
        }
        try publisher.bind("ipc://\(directory)/updates.sock")
        let client = try ReceiptsClient(
            .init(cluster: Cluster(workers: [.init(dataDirectory: directory)])),
            logger: Logger(label: "test")
        )
        let topic = SubscriptionTopic.prefix(Partitioning.topic(for: "c1"))
        let seen = Seen()
        var followers: [Task<Void, Never>] = []
        for index in 0..<3 {
            // Two follow c1 by the same filter; the third follows c2 (not everything: its empty
            // filter would let c1 through the socket whatever c1's own filter).
            let updates = client.subscribe(to: index == 2 ? .prefix(Partitioning.topic(for: "c2")) : topic)
            followers.append(
                Task {
                    for await update in updates {
                        seen.append(update.sequence, to: index)
                    }
                }
            )
        }
        var next = try await Self.publish(publisher, "c1", from: 1) {
            (0..<2).allSatisfy { !seen.of($0).isEmpty }
        }
        #expect((0..<2).allSatisfy { !seen.of($0).isEmpty }, "both c1 subscriptions hear c1")

        followers[0].cancel()
        await followers[0].value
        let before = seen.of(1).count
        next = try await Self.publish(publisher, "c1", from: next) {
            seen.of(1).count >= before + 3
        }
        #expect(seen.of(1).count >= before + 3, "the other c1 subscription still hears it")
        // c2's sequences are far above c1's, so they tell the two apart.
        let c2 = next + 1000
        _ = try await Self.publish(publisher, "c2", from: c2) { seen.of(2).contains(c2) }
        #expect(seen.of(2).contains(c2), "the c2 subscription takes c2")
        #expect(seen.of(1).allSatisfy { $0 < next }, "c2 is not c1's")
        #expect(seen.of(2).allSatisfy { $0 >= c2 }, "c1 is not c2's")
        for follower in followers { follower.cancel() }
        await client.shutdown()
        for follower in followers { await follower.value }
    }
}
