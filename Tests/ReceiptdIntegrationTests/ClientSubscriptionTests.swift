import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// `ReceiptsClient.subscribe` against a real worker: restarts, slow consumers, cancellation.
@Suite(.serialized, .startsProcesses)
struct ClientSubscriptionTests {
    /// Reads updates until `done` holds for the last status of each message, or `seconds` pass.
    private static func collect(
        _ updates: StatusUpdates,
        seconds: Double,
        until done: @escaping @Sendable ([String: MessageStatus]) -> Bool
    ) async throws -> [StatusUpdate] {
        try await within(seconds, "the expected updates") {
            var seen: [StatusUpdate] = []
            var latest: [String: MessageStatus] = [:]
            for await update in updates {
                seen.append(update)
                latest[update.status.conversation + "/" + update.status.message] = update.status
                if done(latest) { break }
            }
            return seen
        }
    }

    /// Per message, no update the consumer saw went back.
    private static func expectMonotonic(_ updates: [StatusUpdate]) {
        var shown: [String: MessageStatus] = [:]
        for update in updates {
            let key = update.status.conversation + "/" + update.status.message
            if let previous = shown[key] {
                #expect(
                    update.status.status >= previous.status && update.status.readCount >= previous.readCount
                        && update.status.deliveredCount >= previous.deliveredCount,
                    "\(key) went from \(previous.status) to \(update.status.status)"
                )
            }
            shown[key] = update.status
        }
    }

    @Test func subscriberFollowsAWorkerRestart() async throws {
        let cluster = try await WorkerCluster(count: 1)
        let client = try cluster.client()
        let conversation = "restart-sub"
        _ = try await client.send([
            .conversationUpserted(conversation: conversation, kind: .group, members: ["a", "b", "c"]),
            .messageSent(conversation: conversation, message: "m1", sender: "a", isSystem: false),
        ])
        let updates = client.subscribe(to: .conversation(conversation))
        _ = try await client.send([
            .delivered(conversation: conversation, user: "b", message: "m1"),
            .delivered(conversation: conversation, user: "c", message: "m1"),
        ])
        // The first run's updates reach the subscriber before the restart: its subscription starts
        // from a snapshot the loop asks for on its own time, which on a busy machine can come
        // after a kill right away, and then nothing of the first run would show.
        let before = try await Self.collect(updates, seconds: 20) { latest in
            latest["\(conversation)/m1"]?.deliveredCount == 2
        }
        let worker = cluster.workers[0]
        worker.kill9()
        try await worker.start()
        _ = try await client.send(.read(conversation: conversation, user: "b", message: "m1"))
        _ = try await client.send(.read(conversation: conversation, user: "c", message: "m1"))
        let seen =
            try await before
            + Self.collect(updates, seconds: 20) { latest in
                latest["\(conversation)/m1"]?.status == .readByAll
            }

        Self.expectMonotonic(seen)
        #expect(
            Set(seen.map(\.publisherRun)).count >= 2,
            "the restart's new epoch must show: \(seen.map(\.publisherRun))"
        )
        let fresh = try await client.snapshot(of: conversation).snapshot.messages
        #expect(seen.last?.status == fresh.first { $0.message == "m1" })
        #expect(client.currentStatistics.snapshotRepairs >= 2)
        await client.shutdown()
    }

    @Test func slowConsumerGetsTheNewestStatusesCoalesced() async throws {
        let cluster = try await WorkerCluster(count: 1)
        let client = try cluster.client { $0.subscriptionBuffer = 4 }
        let updates = client.subscribe(to: .everything)
        let conversations = (0..<5).map { "slow-\($0)" }
        let published = 5 * 6 * 7
        let (seen, latest) = try await within(60, "the slow consumer") {
            var iterator = updates.makeAsyncIterator()
            // The subscription is attached once one of its own probe updates comes through.
            _ = try await client.send([
                .conversationUpserted(conversation: "probe", kind: .direct, members: ["p", "q"])
            ])
            var attached = false
            for attempt in 0..<100 where !attached {
                _ = try await client.send(
                    .messageSent(conversation: "probe", message: "p\(attempt)", sender: "p", isSystem: false)
                )
                attached = await iterator.next() != nil
            }
            #expect(attached)

            var events: [EventKind] = conversations.map {
                .conversationUpserted(conversation: $0, kind: .group, members: ["a", "b", "c", "d"])
            }
            for conversation in conversations {
                for message in 0..<6 {
                    events.append(
                        .messageSent(conversation: conversation, message: "m\(message)", sender: "a", isSystem: false)
                    )
                    for user in ["b", "c", "d"] {
                        events.append(.delivered(conversation: conversation, user: user, message: "m\(message)"))
                        events.append(.read(conversation: conversation, user: user, message: "m\(message)"))
                    }
                }
            }
            // Published while nobody reads: far more than the 4-update buffer holds.
            for event in events { _ = try await client.send(event) }

            var seen: [StatusUpdate] = []
            var latest: [String: MessageStatus] = [:]
            let expectedKeys = Set(conversations.flatMap { c in (0..<6).map { "\(c)/m\($0)" } })
            while !expectedKeys.allSatisfy({ latest[$0]?.status == .readByAll }), let update = await iterator.next() {
                try await Task.sleep(for: .milliseconds(2))
                guard update.status.conversation != "probe" else { continue }
                seen.append(update)
                latest[update.status.conversation + "/" + update.status.message] = update.status
            }
            return (seen, latest)
        }
        Self.expectMonotonic(seen)
        #expect(seen.count < published, "a consumer with a 4-update buffer saw all \(published) updates")
        #expect(client.currentStatistics.updatesCoalesced > 0)
        for conversation in conversations {
            for status in try await client.snapshot(of: conversation).snapshot.messages {
                #expect(latest["\(conversation)/\(status.message)"] == status)
            }
        }
        await client.shutdown()
    }

    @Test func consumerThatCancelsEndsItsSubscription() async throws {
        let cluster = try await WorkerCluster(count: 1)
        let client = try cluster.client()
        _ = try await client.send([
            .conversationUpserted(conversation: "cancel-sub", kind: .direct, members: ["a", "b"])
        ])
        let updates = client.subscribe(to: .conversation("cancel-sub"))
        let consumer = Task.onOwnThread {
            var count = 0
            for await _ in updates { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(100))
        consumer.cancel()
        _ = try await within(5, "the cancelled consumer") { await consumer.value }
        // The client goes on serving.
        #expect(try await client.health(worker: 0).state == "serving")
        #expect(
            try await client.send(.messageSent(conversation: "cancel-sub", message: "m1", sender: "a", isSystem: false))
                == .accepted(held: false)
        )
        await client.shutdown()
    }
}
