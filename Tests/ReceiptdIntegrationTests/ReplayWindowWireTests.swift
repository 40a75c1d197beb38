import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// An event id below its source's anti-replay window (4096 sequences), sent as a C, Go or
/// Python gateway may: answered REJECTED with REJECT_REASON_OUTSIDE_REPLAY_WINDOW ("cannot
/// tell whether it was applied"), never DUPLICATE ("applied before"), never applied, and
/// answered the same after a restart that replays the log.
///
/// The frames are protobuf bytes written here field by field and the replies are read the same
/// way, as a gateway with its own protobuf library sees them: the numbers are the contract.
@Suite(.serialized, .startsProcesses)
struct ReplayWindowWireTests {
    private static let source = "c-gateway"
    private static let conversation = "window-1"

    private static func event(_ sequence: UInt64, kindField: UInt64, _ body: [UInt8]) -> [UInt8] {
        RawProto.event(source: source, sequence: sequence, kindField: kindField, body)
    }

    private static func upsert(_ sequence: UInt64) -> [UInt8] {
        // ConversationUpserted (10): group (kind 2) of a and b.
        event(
            sequence,
            kindField: 10,
            RawProto.field(1, conversation) + RawProto.field(2, varint: 2) + RawProto.field(3, "a")
                + RawProto.field(3, "b")
        )
    }

    private static func join(_ sequence: UInt64, _ user: String) -> [UInt8] {
        event(sequence, kindField: 11, RawProto.field(1, conversation) + RawProto.field(2, user))
    }

    private static func message(_ sequence: UInt64, _ message: String) -> [UInt8] {
        event(
            sequence,
            kindField: 13,
            RawProto.field(1, conversation) + RawProto.field(2, message) + RawProto.field(3, "a")
        )
    }

    private static func read(_ sequence: UInt64, _ user: String, _ message: String) -> [UInt8] {
        event(
            sequence,
            kindField: 15,
            RawProto.field(1, conversation) + RawProto.field(2, user) + RawProto.field(3, message)
        )
    }

    @Test func anIDBelowTheWindowIsAnsweredAsSuchNotAsADuplicate() async throws {
        let daemon = try await ReceiptdProcess()
        // The group, and a message 4999 sequences later: the window (4096) now starts at 905.
        RawEventResult.expect(
            try RawEventResult.exchange(daemon, [Self.upsert(1), Self.message(5000, "m1")]),
            [RawEventResult.accepted, RawEventResult.accepted]
        )

        let results = try RawEventResult.exchange(
            daemon,
            [
                Self.join(2, "c"),  // never seen, below the window
                Self.upsert(1),  // seen, but below the window: cannot be told apart either
                Self.read(4999, "b", "m1"),  // never seen, inside the window: applied
                Self.message(5000, "m1"),  // seen, inside the window
            ]
        )
        RawEventResult.expect(
            results,
            [
                RawEventResult.outsideWindow, RawEventResult.outsideWindow, RawEventResult.accepted,
                RawEventResult.duplicate,
            ]
        )
        if let first = results.first {
            #expect(first.detail.contains("\(Self.source)#2"), "\(first.detail)")
            #expect(first.detail.contains("cannot tell whether it was applied"), "\(first.detail)")
        }
        #expect(try await daemon.counter("receiptd.events.rejected", label: "outside_replay_window") == 2)

        // A Swift caller of `send` sees a rejection with the reason, never a success.
        let outcomes = try await daemon.ingest([
            Event(
                id: EventID(source: Self.source, sequence: 3),
                kind: .memberJoined(conversation: Self.conversation, user: "c")
            )
        ])
        if case .rejected(let rejection)? = outcomes.first {
            #expect(rejection.reason == .outsideReplayWindow)
        } else {
            Issue.record("the client answered \(outcomes)")
        }

        // c never joined: a new message has one recipient, b.
        RawEventResult.expect(
            try RawEventResult.exchange(daemon, [Self.message(5001, "m2")]),
            [RawEventResult.accepted]
        )
        #expect(try await daemon.status(Self.conversation, "m2", viewer: Viewer(user: "a")).status.recipientCount == 1)

        // Replaying the log after a crash decides each id as it was decided live; so does a
        // snapshot (it keeps the windows) and the log after it.
        daemon.kill9()
        try await daemon.start()
        RawEventResult.expect(
            try RawEventResult.exchange(
                daemon,
                [Self.join(2, "c"), Self.message(5001, "m2"), Self.message(5002, "m3")]
            ),
            [RawEventResult.outsideWindow, RawEventResult.duplicate, RawEventResult.accepted]
        )
        #expect(try await daemon.status(Self.conversation, "m3", viewer: Viewer(user: "a")).status.recipientCount == 1)
        _ = try await daemon.client.compact(worker: 0)
        RawEventResult.expect(
            try RawEventResult.exchange(daemon, [Self.join(4, "c"), Self.message(5003, "m4")]),
            [RawEventResult.outsideWindow, RawEventResult.accepted]
        )
        daemon.kill9()
        try await daemon.start()
        RawEventResult.expect(
            try RawEventResult.exchange(
                daemon,
                [Self.join(4, "c"), Self.message(5003, "m4"), Self.message(5004, "m5")]
            ),
            [RawEventResult.outsideWindow, RawEventResult.duplicate, RawEventResult.accepted]
        )
        #expect(try await daemon.status(Self.conversation, "m5", viewer: Viewer(user: "a")).status.recipientCount == 1)
    }
}
