import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// Seed 000's and 003's flows against the real daemon, observed on the PUB socket and
/// through queries.
@Suite(.serialized, .startsProcesses)
struct SeedFlowTests {
    private func expectAllAccepted(_ outcomes: [EventOutcome], sourceLocation: SourceLocation = #_sourceLocation) {
        for outcome in outcomes {
            #expect(outcome == .accepted(held: false), sourceLocation: sourceLocation)
        }
    }

    @Test("Seed 000 One-on-One Chat Test: nothing, then Delivered, then Read at <time>")
    func oneOnOneChat() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        let conversation = "direct-ab"
        let alice = Viewer(user: "alice", timeZone: "UTC", locale: "en_US")
        let updates = try await daemon.subscribe(to: conversation)

        expectAllAccepted(
            try await daemon.ingest([
                events.make(
                    .conversationUpserted(conversation: conversation, kind: .direct, members: ["alice", "bob"])
                ),
                events.make(.messageSent(conversation: conversation, message: "m1", sender: "alice", isSystem: false)),
            ])
        )
        // 1-2. User A sends; A sees nothing.
        let sent = try updates.updates { $0.status.message == "m1" }
        #expect(sent.last?.status.status == .notDelivered)
        #expect(try await daemon.status(conversation, "m1", viewer: alice).displayText == "")

        // 3-4. B's device receives it in the background; A sees "Delivered".
        expectAllAccepted(
            try await daemon.ingest([events.make(.delivered(conversation: conversation, user: "bob", message: "m1"))])
        )
        let delivered = try #require(try updates.next())
        #expect(delivered.status.status == .delivered)
        #expect(delivered.sequence == sent.last!.sequence + 1)
        #expect(try await daemon.status(conversation, "m1", viewer: alice).displayText == "Delivered")

        // 5-6. B opens the chat; A sees "Read at <time>".
        expectAllAccepted(
            try await daemon.ingest([events.make(.read(conversation: conversation, user: "bob", message: "m1"))])
        )
        let read = try #require(try updates.next())
        #expect(read.status.status == .read)
        #expect(read.sequence == delivered.sequence + 1)
        let readAt = try #require(read.status.readAt)
        let shown = try await daemon.status(conversation, "m1", viewer: alice)
        #expect(shown.status.status == .read)
        #expect(shown.status.readAt == readAt)
        #expect(shown.displayText.hasPrefix("Read at "))
        // Bob is not the sender: nothing is shown under someone else's message.
        #expect(try await daemon.status(conversation, "m1", viewer: Viewer(user: "bob")).displayText == "")
    }

    @Test("Seed 000 Group Chat Test: nothing, Delivered, Read by some users, Read by all users")
    func groupChat() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        let group = "group-abcd"
        let alice = Viewer(user: "alice")
        let updates = try await daemon.subscribe(to: group)

        expectAllAccepted(
            try await daemon.ingest([
                events.make(
                    .conversationUpserted(
                        conversation: group,
                        kind: .group,
                        members: ["alice", "bob", "carol", "dave"]
                    )
                ),
                events.make(.messageSent(conversation: group, message: "m1", sender: "alice", isSystem: false)),
            ])
        )
        #expect(try updates.updates { $0.status.message == "m1" }.last?.status.status == .notDelivered)
        #expect(try await daemon.status(group, "m1", viewer: alice).displayText == "")

        // All users receive it in the background.
        expectAllAccepted(
            try await daemon.ingest([events.make(.delivered(conversation: group, user: "bob", message: "m1"))])
        )
        #expect(try await daemon.status(group, "m1", viewer: alice).displayText == "", "not yet delivered to everyone")
        expectAllAccepted(
            try await daemon.ingest([
                events.make(.delivered(conversation: group, user: "carol", message: "m1")),
                events.make(.delivered(conversation: group, user: "dave", message: "m1")),
            ])
        )
        #expect(try updates.updates { $0.status.status == .delivered }.last?.status.deliveredCount == 3)
        #expect(try await daemon.status(group, "m1", viewer: alice).displayText == "Delivered")

        // B reads.
        expectAllAccepted(
            try await daemon.ingest([events.make(.read(conversation: group, user: "bob", message: "m1"))])
        )
        #expect(try updates.updates { $0.status.status == .readBySome }.last?.status.readCount == 1)
        #expect(try await daemon.status(group, "m1", viewer: alice).displayText == "Read by some users")
        let counts = Viewer(user: "alice", prefersCounts: true)
        #expect(try await daemon.status(group, "m1", viewer: counts).displayText == "Read by 1 of 3")

        // C and D read.
        expectAllAccepted(
            try await daemon.ingest([
                events.make(.read(conversation: group, user: "carol", message: "m1")),
                events.make(.read(conversation: group, user: "dave", message: "m1")),
            ])
        )
        #expect(try updates.updates { $0.status.status == .readByAll }.last?.status.readCount == 3)
        #expect(try await daemon.status(group, "m1", viewer: alice).displayText == "Read by all users")

        // The last-sent query points at the message the receipt is shown under.
        let last = try await daemon.client.lastSent(in: group, viewer: alice)
        #expect(last.status.message == "m1")
        #expect(last.displayText == "Read by all users")
    }

    @Test("Seed 003 who-read-it detail: readers most recent first, sender excluded, non-readers delivered")
    func readDetailOrdering() async throws {
        let daemon = try await ReceiptdProcess()
        var events = EventFactory()
        let group = "group-sheet"
        expectAllAccepted(
            try await daemon.ingest([
                events.make(
                    .conversationUpserted(conversation: group, kind: .group, members: ["a", "b", "c", "d", "e"])
                ),
                events.make(.messageSent(conversation: group, message: "m1", sender: "a", isSystem: false)),
                events.make(.delivered(conversation: group, user: "d", message: "m1")),
                events.make(.delivered(conversation: group, user: "e", message: "m1")),
                events.make(.read(conversation: group, user: "b", message: "m1")),
            ])
        )
        try await Task.sleep(for: .milliseconds(20))  // so that C's server read time is later than B's
        expectAllAccepted(try await daemon.ingest([events.make(.read(conversation: group, user: "c", message: "m1"))]))

        let detail = try await daemon.client.readDetail(of: "m1", in: group)
        #expect(detail.read.map(\.user) == ["c", "b"])
        #expect(Set(detail.delivered.map(\.user)) == ["d", "e"])
        #expect(detail.notDelivered.isEmpty)
        let everyone = detail.read + detail.delivered + detail.notDelivered
        #expect(!everyone.contains { $0.user == "a" }, "the sender is never listed")
        #expect(detail.status.status == .readBySome)
    }
}
