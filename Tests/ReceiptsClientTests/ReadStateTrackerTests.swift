import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsClient

/// The read-state Clone tracker without I/O: one stream per worker, repaired from that worker's
/// per-user snapshot; the consumer sees a state per conversation only when it changed.
struct ReadStateTrackerTests {
    static func state(_ conversation: String, readUpTo: UInt64, unread: Int = 0, marked: Bool = false) -> UnreadCount {
        UnreadCount(conversation: conversation, unread: unread, isMarkedUnread: marked, readUpTo: readUpTo)
    }

    static func update(run: UInt64, _ sequence: UInt64, _ state: UnreadCount) -> ReadStateUpdate {
        ReadStateUpdate(
            publisherRun: run,
            sequence: sequence,
            change: ReadStateChange(user: "dana", state: state, time: Timestamp(milliseconds: 1000 + Int64(sequence)))
        )
    }

    @Test func aStartedStreamHoldsUpdatesUntilItsSnapshotThenShowsOnlyWhatIsNew() {
        var tracker = ReadStateTracker(user: "dana")
        tracker.expectSnapshot(from: 0)
        #expect(tracker.isRepairing(0))
        #expect(tracker.receive(Self.update(run: 7, 3, Self.state("a", readUpTo: 4)), from: 0) == .init())
        #expect(tracker.receive(Self.update(run: 7, 4, Self.state("b", readUpTo: 2)), from: 0) == .init())
        let decision = tracker.snapshotArrived(
            [Self.state("a", readUpTo: 4), Self.state("b", readUpTo: 1, unread: 1)],
            publisherRun: 7,
            sequence: 3,
            from: 0,
            owner: { _ in 0 }
        )
        // The snapshot's states, then the held update after it (sequence 3 is covered).
        #expect(
            decision.emit.map(\.change.state) == [
                Self.state("a", readUpTo: 4), Self.state("b", readUpTo: 1, unread: 1), Self.state("b", readUpTo: 2),
            ]
        )
        #expect(decision.repair == nil)
        #expect(!tracker.isRepairing(0))
        // Live: the next in sequence shows; a repeat and an unchanged state do not.
        #expect(tracker.receive(Self.update(run: 7, 5, Self.state("a", readUpTo: 5)), from: 0).emit.count == 1)
        #expect(tracker.receive(Self.update(run: 7, 5, Self.state("a", readUpTo: 5)), from: 0) == .init())
        #expect(tracker.receive(Self.update(run: 7, 6, Self.state("a", readUpTo: 5)), from: 0) == .init())
    }

    /// Issue 31: a thread's change reaches the consumer even when the conversation's state
    /// it carries is unchanged, and a snapshot's threads come with it (read ones included).
    @Test func threadStatesAreShownPerThreadAndComeWithTheSnapshot() {
        var tracker = ReadStateTracker(user: "dana")
        tracker.expectSnapshot(from: 0)
        let conversation = Self.state("g", readUpTo: 4)
        let unreadThread = ThreadReadState(
            conversation: "g",
            thread: "m1",
            unread: 2,
            unreadMentions: 1,
            readUpTo: 5,
            isFollowing: true
        )
        let readThread = ThreadReadState(
            conversation: "g",
            thread: "m2",
            unread: 0,
            unreadMentions: 0,
            readUpTo: 9,
            isFollowing: true
        )
        let snapshot = tracker.snapshotArrived(
            [conversation],
            threads: [unreadThread, readThread],
            publisherRun: 3,
            sequence: 1,
            from: 0,
            owner: { _ in 0 }
        )
        #expect(snapshot.emit.map(\.change.thread) == [nil, unreadThread, readThread])
        var read = unreadThread
        read.unread = 0
        read.unreadMentions = 0
        let live = ReadStateUpdate(
            publisherRun: 3,
            sequence: 2,
            change: ReadStateChange(user: "dana", state: conversation, thread: read, time: Timestamp(milliseconds: 5))
        )
        #expect(
            tracker.receive(live, from: 0).emit == [live],
            "the conversation's state did not change, the thread's did"
        )
        var again = live
        again.sequence = 3
        #expect(tracker.receive(again, from: 0) == .init(), "nothing changed")
    }

    @Test func aGapOrANewRunRepairsThatWorkerOnlyAndTheSnapshotWins() {
        var tracker = ReadStateTracker(user: "dana")
        for worker in 0..<2 {
            tracker.expectSnapshot(from: worker)
            _ = tracker.snapshotArrived(
                [Self.state("c\(worker)", readUpTo: 1)],
                publisherRun: 10,
                sequence: 1,
                from: worker,
                owner: { _ in worker }
            )
        }
        // A gap on worker 1's stream repairs worker 1; worker 0 goes on live.
        let gap = tracker.receive(Self.update(run: 10, 3, Self.state("c1", readUpTo: 3)), from: 1)
        #expect(gap == .init(emit: [], repair: 1))
        #expect(tracker.receive(Self.update(run: 10, 2, Self.state("c0", readUpTo: 2)), from: 0).emit.count == 1)
        let repaired = tracker.snapshotArrived(
            [Self.state("c1", readUpTo: 3)],
            publisherRun: 10,
            sequence: 3,
            from: 1,
            owner: { _ in 1 }
        )
        #expect(repaired.emit.map(\.change.state) == [Self.state("c1", readUpTo: 3)])
        // Worker 0 restarted: a new run is repaired from its snapshot.
        #expect(tracker.receive(Self.update(run: 11, 1, Self.state("c0", readUpTo: 4)), from: 0).repair == 0)
        let restarted = tracker.snapshotArrived(
            [Self.state("c0", readUpTo: 4)],
            publisherRun: 11,
            sequence: 1,
            from: 0,
            owner: { _ in 0 }
        )
        #expect(restarted.emit.map(\.change.state) == [Self.state("c0", readUpTo: 4)])
        #expect(restarted.repair == nil)
    }

    @Test func heldUpdatesWithAGapAfterTheSnapshotAskForAnotherOne() {
        var tracker = ReadStateTracker(user: "dana")
        tracker.expectSnapshot(from: 0)
        _ = tracker.receive(Self.update(run: 1, 5, Self.state("a", readUpTo: 5)), from: 0)
        let decision = tracker.snapshotArrived(
            [Self.state("a", readUpTo: 3)],
            publisherRun: 1,
            sequence: 3,
            from: 0,
            owner: { _ in 0 }
        )
        #expect(decision.emit.map(\.change.state) == [Self.state("a", readUpTo: 3)])
        #expect(decision.repair == 0)
        #expect(tracker.isRepairing(0))
    }

    @Test func anUpdateFromAnUnknownWorkerOrOneTheConsumerLostIsRepaired() {
        var tracker = ReadStateTracker(user: "dana")
        #expect(tracker.receive(Self.update(run: 1, 9, Self.state("x", readUpTo: 1)), from: 4).repair == 4)
        _ = tracker.snapshotArrived(
            [Self.state("x", readUpTo: 1)],
            publisherRun: 1,
            sequence: 9,
            from: 4,
            owner: { _ in 4 }
        )
        let shown = Self.update(run: 1, 10, Self.state("x", readUpTo: 2))
        #expect(tracker.receive(shown, from: 4).emit == [shown])
        tracker.lost(shown, from: 4)
        #expect(tracker.isRepairing(4))
        // The repair shows the lost state again.
        let repaired = tracker.snapshotArrived(
            [Self.state("x", readUpTo: 2)],
            publisherRun: 1,
            sequence: 10,
            from: 4,
            owner: { _ in 4 }
        )
        #expect(repaired.emit.map(\.change.state) == [Self.state("x", readUpTo: 2)])
    }

    @Test func aConversationItsOwnerNoLongerListsIsShownLeftButOneThatMovedIsNot() {
        var tracker = ReadStateTracker(user: "dana")
        let owners = ["stays": 0, "left": 0, "moved": 1]
        tracker.expectSnapshot(from: 0)
        _ = tracker.snapshotArrived(
            [Self.state("stays", readUpTo: 1), Self.state("left", readUpTo: 2), Self.state("moved", readUpTo: 3)],
            publisherRun: 5,
            sequence: 1,
            from: 0,
            owner: { owners[$0]! }
        )
        // dana's leave of "left" was lost; "moved" now belongs to worker 1.
        tracker.expectSnapshot(from: 0)
        let repaired = tracker.snapshotArrived(
            [Self.state("stays", readUpTo: 1)],
            publisherRun: 5,
            sequence: 4,
            from: 0,
            owner: { owners[$0]! }
        )
        var left = Self.state("left", readUpTo: 2)
        left.hasLeft = true
        #expect(repaired.emit.map(\.change.state) == [left])
    }

    @Test func heldUpdatesOfAnotherRunAreDroppedInsteadOfRepairedForever() {
        var tracker = ReadStateTracker(user: "dana")
        tracker.expectSnapshot(from: 0)
        // An update of the worker's run before a restart arrives while the new run's snapshot is asked for.
        _ = tracker.receive(Self.update(run: 1, 9, Self.state("a", readUpTo: 9)), from: 0)
        let decision = tracker.snapshotArrived(
            [Self.state("a", readUpTo: 9)],
            publisherRun: 2,
            sequence: 0,
            from: 0,
            owner: { _ in 0 }
        )
        #expect(decision.repair == nil)
        #expect(!tracker.isRepairing(0))
        #expect(tracker.receive(Self.update(run: 2, 1, Self.state("a", readUpTo: 10)), from: 0).emit.count == 1)
    }
}
