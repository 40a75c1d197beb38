import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Synchronization
import Testing

/// A user's own read state pushed to all of their devices (issue 23), with real processes: the
/// user has a conversation on each of two workers; two subscribers of the user (a phone and a
/// laptop, each its own client, as two gateways would be) see the reads made through a third
/// client on both workers, private ones included, and each ends equal to a fresh per-user
/// snapshot after a worker is killed and started again.
@Suite(.serialized, .startsProcesses) struct ReadStateDevicesTests {
    /// What one device shows: the latest state per conversation, as its stream delivered it.
    final class DeviceView: Sendable {
        private let states = Mutex<[String: UnreadCount]>([:])
        private let updates = Mutex(0)

        /// Follows the user's read state until the task is cancelled.
        func follow(_ stream: ReadStateUpdates) -> Task<Void, Never> {
            Task.onOwnThread { [self] in
                for await update in stream {
                    states.withLock { $0[update.change.state.conversation] = update.change.state }
                    updates.withLock { $0 += 1 }
                }
            }
        }

        /// The conversations the user is still a member of, with their state.
        var current: [String: UnreadCount] {
            states.withLock { $0.filter { !$0.value.hasLeft } }
        }

        var all: [String: UnreadCount] { states.withLock { $0 } }
        var updateCount: Int { updates.withLock { $0 } }
    }

    /// Waits until `condition` holds for the device's states, up to `seconds`.
    static func eventually(
        _ device: DeviceView,
        seconds: Double = 10,
        _ condition: ([String: UnreadCount]) -> Bool
    ) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if condition(device.all) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition(device.all)
    }

    /// Read-state updates both workers published so far.
    static func readStatesPublished(_ client: ReceiptsClient) async throws -> UInt64 {
        var total: UInt64 = 0
        for worker in 0..<2 {
            total +=
                try await client.stats(worker: worker).first { $0.name == "receiptd.read_states.published" }?.value ?? 0
        }
        return total
    }

    /// One conversation id owned by each worker.
    static func conversations(owners client: ReceiptsClient) -> [String] {
        (0..<2).map { worker in
            (0...).lazy.map { "devices-\(worker)-\($0)" }.first { client.owner(of: $0) == worker }!
        }
    }

    @Test func readsOnTwoWorkersReachBothDevicesAndAfterARestartEachEqualsASnapshot() async throws {
        let cluster = try await WorkerCluster(count: 2)
        let writer = try cluster.client(source: "writer")
        let phone = try cluster.client(source: "phone")
        let laptop = try cluster.client(source: "laptop")
        let conversations = Self.conversations(owners: writer)
        let (onZero, onOne) = (conversations[0], conversations[1])
        for conversation in conversations {
            #expect(
                try await writer.send(
                    .conversationUpserted(conversation: conversation, kind: .group, members: ["dana", "sam", "lee"])
                )
                    == .accepted(held: false)
            )
        }
        let phoneView = DeviceView()
        let laptopView = DeviceView()
        let following = [
            phoneView.follow(phone.subscribe(to: .user("dana"))),
            laptopView.follow(laptop.subscribe(to: .user("dana"))),
        ]
        defer { for task in following { task.cancel() } }
        // Each device starts from the snapshots: both conversations, nothing unread yet.
        for view in [phoneView, laptopView] {
            #expect(try await Self.eventually(view) { $0.keys.sorted() == conversations.sorted() })
        }

        // Each worker announced dana's state when the devices' subscriptions arrived (once for
        // both if they came together): at least 2 updates, at most 4, then no more.
        let announced = ContinuousClock.now + .seconds(10)
        var publishedBefore = try await Self.readStatesPublished(writer)
        while ContinuousClock.now < announced {
            try await Task.sleep(for: .milliseconds(500))
            let now = try await Self.readStatesPublished(writer)
            if now == publishedBefore && now >= 2 { break }
            publishedBefore = now
        }
        #expect((2...4).contains(publishedBefore))
        for conversation in conversations {
            for index in 1...5 {
                _ = try await writer.send(
                    .messageSent(conversation: conversation, message: "m\(index)", sender: "sam", isSystem: false)
                )
            }
        }
        // New messages publish nothing on the users' topics (no fan-out per member): the
        // devices count them from their gateway's conversation traffic.
        #expect(try await Self.readStatesPublished(writer) == publishedBefore)

        // dana reads m3 on worker 0; on worker 1 she shares no reads, reads m5 (private), then
        // flags the conversation unread.
        #expect(
            try await writer.send(.read(conversation: onZero, user: "dana", message: "m3")) == .accepted(held: false)
        )
        #expect(
            try await writer.setReceiptPrivacy(user: "dana", shareReads: false, in: onOne) == .accepted(held: false)
        )
        #expect(
            try await writer.send(.read(conversation: onOne, user: "dana", message: "m5")) == .accepted(held: false)
        )
        #expect(try await writer.send(.markedUnread(conversation: onOne, user: "dana")) == .accepted(held: false))
        let expected: [String: UnreadCount] = [
            onZero: UnreadCount(conversation: onZero, unread: 2, isMarkedUnread: false, readUpTo: 3),
            onOne: UnreadCount(conversation: onOne, unread: 0, isMarkedUnread: true, readUpTo: 5),
        ]
        for (name, view) in [("phone", phoneView), ("laptop", laptopView)] {
            #expect(try await Self.eventually(view) { $0 == expected }, "\(name): \(view.all)")
        }
        // The private read reached dana's devices but nobody else's view.
        let status = try await writer.status(of: "m5", in: onOne, viewer: Viewer(user: "sam"))
        #expect(status.status.readCount == 0, "a private read shows in the conversation: \(status.status)")

        // Worker 1 dies and comes back (a new publisher run); dana leaves worker 0's conversation
        // meanwhile, and reads on worker 1 once it is back.
        let victim = cluster.workers[1]
        victim.kill9()
        #expect(try await writer.send(.memberLeft(conversation: onZero, user: "dana")) == .accepted(held: false))
        try await victim.start()
        let reread = try await within(20, "a read on the restarted worker") {
            try await writer.send(.read(conversation: onOne, user: "dana", message: "m5"))
        }
        #expect(reread == .accepted(held: false))
        let snapshot = try await writer.unreadCounts(for: "dana")
        #expect(snapshot.map(\.conversation) == [onOne], "dana left \(onZero): \(snapshot)")
        for (name, view) in [("phone", phoneView), ("laptop", laptopView)] {
            #expect(
                try await Self.eventually(view, seconds: 20) { _ in
                    view.current == Dictionary(uniqueKeysWithValues: snapshot.map { ($0.conversation, $0) })
                },
                "\(name) ends at \(view.all), the snapshot is \(snapshot)"
            )
            #expect(view.all[onZero]?.hasLeft == true, "\(name) was not told that dana left \(onZero)")
        }
        #expect(snapshot.first?.isMarkedUnread == false, "the read after the restart clears the flag")
        await writer.shutdown()
        await phone.shutdown()
        await laptop.shutdown()
    }
}
