import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// The PUB side with a coalescing window: fewer updates, each final, sequences unbroken.
@Suite(.serialized, .startsProcesses)
struct PublishingTests {
    @Test(
        "With --coalesce-ms 200, receipts on a message within the window publish one update with the final counts; sequences go 1, 2, 3 ..."
    )
    func coalescingWindow() async throws {
        let daemon = try await ReceiptdProcess(arguments: ["--coalesce-ms", "200"])
        var events = EventFactory()
        let group = "coalesce"
        let updates = try await daemon.subscribe(to: group)
        func expectAccepted(_ outcomes: [EventOutcome], sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(outcomes.allSatisfy { $0 == .accepted(held: false) }, "\(outcomes)", sourceLocation: sourceLocation)
        }

        expectAccepted(
            try await daemon.ingest([
                events.make(
                    .conversationUpserted(conversation: group, kind: .group, members: ["s", "r1", "r2", "r3"])
                ),
                events.make(.messageSent(conversation: group, message: "m1", sender: "s", isSystem: false)),
            ])
        )
        let sent = try #require(try updates.next())
        #expect(sent.sequence == 1)
        #expect(sent.status.message == "m1" && sent.status.status == .notDelivered)

        // Five receipts on m1, one frame each, sent back to back: all inside one window.
        let receipts = try daemon.ingestPipelined([
            [events.make(.delivered(conversation: group, user: "r1", message: "m1"))],
            [events.make(.delivered(conversation: group, user: "r2", message: "m1"))],
            [events.make(.delivered(conversation: group, user: "r3", message: "m1"))],
            [events.make(.read(conversation: group, user: "r1", message: "m1"))],
            [events.make(.read(conversation: group, user: "r2", message: "m1"))],
        ])
        #expect(receipts.allSatisfy { $0.error == nil }, "\(receipts)")
        expectAccepted(receipts.flatMap(\.results))
        let coalesced = try #require(try updates.next())
        #expect(coalesced.sequence == 2, "the next sequence: coalescing leaves no gap")
        #expect(coalesced.status.message == "m1")
        #expect(coalesced.status.status == .readBySome)
        #expect(coalesced.status.deliveredCount == 3)
        #expect(coalesced.status.readCount == 2)
        #expect(try updates.next(timeoutMilliseconds: 600) == nil, "one update for the whole window")

        // Two new messages and reads by everyone up to the newer one, in one batch: one final
        // update per touched message (m1 becomes read by all through r3's "up to" read).
        expectAccepted(
            try await daemon.ingest([
                events.make(.messageSent(conversation: group, message: "m2", sender: "s", isSystem: false)),
                events.make(.messageSent(conversation: group, message: "m3", sender: "s", isSystem: false)),
                events.make(.read(conversation: group, user: "r1", message: "m3")),
                events.make(.read(conversation: group, user: "r2", message: "m3")),
                events.make(.read(conversation: group, user: "r3", message: "m3")),
            ])
        )
        var window: [StatusUpdate] = []
        while let update = try updates.next(timeoutMilliseconds: 600) { window.append(update) }
        #expect(
            window.map(\.sequence) == [3, 4, 5],
            "gap-free and one per message: \(window.map { ($0.sequence, $0.status.message) })"
        )
        #expect(window.map(\.status.message).sorted() == ["m1", "m2", "m3"])
        for update in window {
            #expect(
                update.status.status == .readByAll && update.status.readCount == 3,
                "\(update.status.message) final: \(update.status)"
            )
        }

        let final = try await daemon.client.snapshot(of: group)
        #expect(final.sequence == 5, "the snapshot continues after the last coalesced update")
        let published = Dictionary(uniqueKeysWithValues: window.map { ($0.status.message, $0.status) })
        for status in final.snapshot.messages {
            #expect(published[status.message] == status, "the published update of \(status.message) is its final state")
        }
    }
}
