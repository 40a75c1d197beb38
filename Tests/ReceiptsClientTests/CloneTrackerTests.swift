import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsClient

/// The Clone-pattern decisions, without sockets: what reaches the consumer and when a
/// snapshot is asked for.
struct CloneTrackerTests {
    /// A status of message `message` in conversation "c" with `delivered` and `read` of 3 recipients.
    private static func status(_ message: String, delivered: Int, read: Int = 0) -> MessageStatus {
        let status: ReceiptStatus =
            read == 3 ? .readByAll : read > 0 ? .readBySome : delivered == 3 ? .delivered : .notDelivered
        return MessageStatus(
            conversation: "c",
            message: message,
            sequence: UInt64(message.dropFirst()) ?? 0,
            sender: "a",
            sentAt: Timestamp(milliseconds: 1000),
            status: status,
            recipientCount: 3,
            deliveredCount: delivered,
            readCount: read,
            deliveredAt: nil,
            readAt: nil,
            isSystem: false,
            isEdited: false,
            isDeleted: false
        )
    }

    private static func update(_ sequence: UInt64, publisherRun: UInt64 = 7, _ status: MessageStatus) -> StatusUpdate {
        StatusUpdate(publisherRun: publisherRun, sequence: sequence, status: status)
    }

    private static func snapshot(_ messages: [MessageStatus]) -> ConversationSnapshot {
        ConversationSnapshot(conversation: "c", kind: .group, members: ["a", "b", "c", "d"], messages: messages)
    }

    @Test func inOrderUpdatesPassAndRepeatsAreSkipped() {
        var tracker = CloneTracker()
        let first = Self.update(1, Self.status("m1", delivered: 1))
        let second = Self.update(2, Self.status("m1", delivered: 2))
        #expect(tracker.receive(first, from: 0).emit == [first])
        #expect(tracker.receive(second, from: 0).emit == [second])
        #expect(tracker.receive(second, from: 0) == .init(emit: [], repair: nil))
    }

    @Test func aGapAsksForASnapshotAndHoldsUpdatesUntilThen() {
        var tracker = CloneTracker()
        _ = tracker.receive(Self.update(1, Self.status("m1", delivered: 1)), from: 0)
        let afterGap = Self.update(4, Self.status("m1", delivered: 3, read: 1))
        #expect(tracker.receive(afterGap, from: 0).repair == "c")
        let held = Self.update(5, Self.status("m1", delivered: 3, read: 2))
        #expect(tracker.receive(held, from: 0).emit.isEmpty)
        // The snapshot covers up to 4; the held update 5 follows it.
        let decision = tracker.snapshotArrived(
            Self.snapshot([Self.status("m1", delivered: 3, read: 1)]),
            publisherRun: 7,
            sequence: 4,
            from: 0
        )
        #expect(decision.repair == nil)
        #expect(decision.emit.map(\.status) == [Self.status("m1", delivered: 3, read: 1), held.status])
    }

    @Test func aNewEpochIsRepaired() {
        var tracker = CloneTracker()
        _ = tracker.receive(Self.update(9, Self.status("m1", delivered: 1)), from: 0)
        #expect(
            tracker.receive(Self.update(1, publisherRun: 8, Self.status("m1", delivered: 2)), from: 0).repair == "c"
        )
    }

    @Test func aSnapshotNeverTakesTheConsumerBack() {
        var tracker = CloneTracker()
        tracker.expectSnapshot(of: "c")
        let newer = Self.update(3, Self.status("m1", delivered: 3, read: 2))
        #expect(tracker.receive(newer, from: 0).emit.isEmpty)  // held until the snapshot
        // A snapshot older than what is held: shown, then the held update after it.
        var decision = tracker.snapshotArrived(
            Self.snapshot([Self.status("m1", delivered: 2)]),
            publisherRun: 7,
            sequence: 2,
            from: 0
        )
        #expect(decision.emit.map(\.status) == [Self.status("m1", delivered: 2), newer.status])
        // A later repair that returns an older state shows nothing.
        tracker.expectSnapshot(of: "c")
        decision = tracker.snapshotArrived(
            Self.snapshot([Self.status("m1", delivered: 3, read: 1)]),
            publisherRun: 7,
            sequence: 3,
            from: 0
        )
        #expect(decision.emit.isEmpty)
    }

    @Test func heldUpdatesWithAGapAfterTheSnapshotAskAgain() {
        var tracker = CloneTracker()
        tracker.expectSnapshot(of: "c")
        _ = tracker.receive(Self.update(6, Self.status("m2", delivered: 1)), from: 0)
        let decision = tracker.snapshotArrived(
            Self.snapshot([Self.status("m1", delivered: 3)]),
            publisherRun: 7,
            sequence: 4,
            from: 0
        )
        #expect(decision.emit.map(\.status) == [Self.status("m1", delivered: 3)])
        #expect(decision.repair == "c")
    }

    @Test func anAbsentConversationStartsAtItsFirstUpdate() {
        var tracker = CloneTracker()
        tracker.expectSnapshot(of: "c")
        #expect(tracker.absent("c") == .init(emit: [], repair: nil))
        let first = Self.update(1, Self.status("m1", delivered: 0))
        #expect(tracker.receive(first, from: 0).emit == [first])
        // Updates held while the answer was on its way mean it exists now: ask again.
        tracker.expectSnapshot(of: "c")
        _ = tracker.receive(Self.update(2, Self.status("m1", delivered: 1)), from: 0)
        #expect(tracker.absent("c").repair == "c")
    }

    @Test func aLostUpdateIsShownByTheNextRepair() {
        var tracker = CloneTracker()
        let update = Self.update(1, Self.status("m1", delivered: 1))
        #expect(tracker.receive(update, from: 0).emit == [update])
        tracker.lost(update)
        #expect(tracker.isRepairing("c"))
        let decision = tracker.snapshotArrived(
            Self.snapshot([Self.status("m1", delivered: 1)]),
            publisherRun: 7,
            sequence: 1,
            from: 0
        )
        #expect(decision.emit.map(\.status) == [Self.status("m1", delivered: 1)])
    }

    /// A conversation moved from worker 0 to worker 2: the new owner publishes it under its own
    /// publisherRun, sequence restarting. The first update from worker 2 asks for a snapshot; the
    /// snapshot from worker 2 makes its stream the one followed.
    @Test func aMoveToAnotherWorkerIsFollowedAfterASnapshot() {
        var tracker = CloneTracker()
        let before = Self.update(5, Self.status("m1", delivered: 1))
        #expect(tracker.receive(before, from: 0).emit == [before])
        let moved = Self.update(1, publisherRun: 99, Self.status("m1", delivered: 2))
        #expect(tracker.receive(moved, from: 2) == .repair("c"))
        let next = Self.update(2, publisherRun: 99, Self.status("m1", delivered: 3))
        #expect(tracker.receive(next, from: 2).emit.isEmpty, "held until the snapshot")
        let decision = tracker.snapshotArrived(
            Self.snapshot([Self.status("m1", delivered: 2)]),
            publisherRun: 99,
            sequence: 1,
            from: 2
        )
        #expect(decision == .emit([Self.update(1, publisherRun: 99, Self.status("m1", delivered: 2)), next]))
        let after = Self.update(3, publisherRun: 99, Self.status("m1", delivered: 3, read: 1))
        #expect(tracker.receive(after, from: 2).emit == [after])
    }

    /// Worker 0's last update, published before the move, arrives after worker 2's stream was
    /// taken up (another socket): it shows nothing, and the owner's snapshot is asked for until
    /// only the followed worker's updates are held, then the stream goes on.
    @Test func aStaleUpdateOfTheFormerOwnerIsNotShown() {
        var tracker = CloneTracker()
        tracker.expectSnapshot(of: "c")
        let current = Self.status("m1", delivered: 3, read: 1)
        #expect(tracker.snapshotArrived(Self.snapshot([current]), publisherRun: 99, sequence: 4, from: 2).repair == nil)
        let stale = Self.update(8, publisherRun: 7, Self.status("m1", delivered: 2))
        #expect(tracker.receive(stale, from: 0) == .repair("c"))
        // The owner answers the same state; the stale update held meanwhile is dropped, and the
        // conversation is asked for once more in case worker 0 owned it again.
        var decision = tracker.snapshotArrived(Self.snapshot([current]), publisherRun: 99, sequence: 4, from: 2)
        #expect(decision == .repair("c"))
        decision = tracker.snapshotArrived(Self.snapshot([current]), publisherRun: 99, sequence: 4, from: 2)
        #expect(decision == .emit([]))
        let next = Self.update(5, publisherRun: 99, Self.status("m1", delivered: 3, read: 2))
        #expect(tracker.receive(next, from: 2).emit == [next])
        #expect(tracker.receive(Self.update(9, publisherRun: 7, Self.status("m1", delivered: 3)), from: 0).emit.isEmpty)
    }
}
