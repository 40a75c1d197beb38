import Glibc
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsService

/// The publishing thread's bounded queue, with the thread stalled for real: it sends into a
/// `StalledSink`, whose `publish` blocks until the test lets it go, as a socket send that does
/// not return would. (A PUB socket itself never blocks: past its high-water mark it drops.)
@Suite struct PublishingQueueTests {
    /// Swallows the drop warnings.
    private static let logger = Logger(label: "publishing-queue-test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Message `message`'s status in conversation `conversation`, sent and not yet delivered.
    private static func status(_ conversation: String, _ message: Int) -> MessageStatus {
        MessageStatus(
            conversation: conversation,
            message: "m\(message)",
            sequence: UInt64(message),
            sender: "ann",
            sentAt: Timestamp(milliseconds: 1_000),
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
    }

    /// Submits `statuses` with the keys an engine gives them: conversation `cN` at index N - 1.
    private static func submit(_ statuses: [MessageStatus], to publisher: StatusPublisher) {
        let keys = statuses.map { UInt64(Int($0.conversation.dropFirst())! - 1) << 32 | $0.sequence }
        publisher.submit(statuses, keys: keys, now: 0)
    }

    /// A counter's value (0 if it was never registered).
    private static func value(of name: String, in counters: ServiceCounters) -> UInt64 {
        counters.snapshot().first { $0.name == name }?.value ?? 0
    }

    @Test(.timeLimit(.minutes(1)))
    func aStalledThreadHoldsAtMostTheLimitAndCountsEveryDrop() throws {
        let counters = ServiceCounters()
        let sink = StalledSink()
        let thread = PublishingThread(
            sink: sink,
            limit: 100,
            counters: counters,
            logger: Self.logger,
            threads: .standard
        )
        #expect(Self.value(of: "receiptd.updates.dropped", in: counters) == 0)
        #expect(counters.snapshot().contains { $0.name == "receiptd.updates.dropped" }, "registered, so exported at 0")
        try thread.start()
        let publisher = StatusPublisher(sink: thread, windowMilliseconds: 0, publisherRun: 7, onPublished: { _ in })

        // The thread takes the first update and stays in its send.
        Self.submit([Self.status("c1", 1)], to: publisher)
        #expect(sink.waitUntilStalled(seconds: 10), "the thread never reached its send")

        // 100,000 more while it is stuck: the queue stops at 100, the rest are counted.
        var deepest = 0
        for message in 2...100_001 {
            Self.submit([Self.status("c1", message)], to: publisher)
            deepest = max(deepest, thread.queuedUpdates)
        }
        #expect(deepest == 100)
        #expect(thread.queuedUpdates == 100)
        #expect(Self.value(of: "receiptd.updates.dropped", in: counters) == 99_900)

        sink.release()
        thread.stop()
        let sent = sink.updates
        #expect(sent.map(\.sequence) == Array(1...101), "the first update, then the 100 the queue held, in order")
        #expect(sent.map(\.status.message) == (1...101).map { "m\($0)" })
        #expect(thread.queuedUpdates == 0)
    }

    /// Sequences are numbered before the queue: the dropped ones leave a gap that the
    /// conversation's next update shows, and only that conversation's.
    @Test(.timeLimit(.minutes(1)))
    func aDropLeavesASequenceGapThatTheNextUpdateShows() throws {
        let counters = ServiceCounters()
        let sink = StalledSink()
        let thread = PublishingThread(sink: sink, limit: 2, counters: counters, logger: Self.logger, threads: .standard)
        try thread.start()
        let publisher = StatusPublisher(sink: thread, windowMilliseconds: 0, publisherRun: 7, onPublished: { _ in })
        Self.submit([Self.status("c1", 1)], to: publisher)
        #expect(sink.waitUntilStalled(seconds: 10), "the thread never reached its send")
        // c1's 2 and 3 fill the queue; c1's 4 and 5 and c2's 1 are dropped.
        Self.submit((2...5).map { Self.status("c1", $0) } + [Self.status("c2", 1)], to: publisher)
        #expect(Self.value(of: "receiptd.updates.dropped", in: counters) == 3)
        sink.release()
        // Once the thread has drained, each conversation's next update goes through.
        #expect(sink.waitForUpdates(3, seconds: 10))
        Self.submit([Self.status("c1", 6), Self.status("c2", 2)], to: publisher)
        thread.stop()

        let sequences = sink.updates.map { "\($0.status.conversation)#\($0.sequence)" }
        #expect(sequences == ["c1#1", "c1#2", "c1#3", "c1#6", "c2#2"])
        #expect(publisher.sequence(of: "c1") == 6 && publisher.sequence(of: "c2") == 2)
    }

    /// The publisher finds a conversation's stream by the engine's index, which a committed move
    /// renumbers: statuses under an index another conversation held, or under their stale one,
    /// still go out on their own topic and numbering, and a conversation that went away and comes
    /// back goes on with its numbering.
    @Test func statusesUnderRenumberedOrStaleIndexesKeepTheirTopicAndNumbering() {
        let sink = RecordingSink()
        let publisher = StatusPublisher(sink: sink, windowMilliseconds: 0, publisherRun: 7, onPublished: { _ in })
        func publish(_ conversation: String, _ message: Int, at index: UInt64) {
            publisher.submit([Self.status(conversation, message)], keys: [index << 32 | UInt64(message)], now: 0)
        }
        publish("c1", 1, at: 0)
        publish("c2", 1, at: 1)
        publish("c3", 1, at: 2)
        // c1 is dropped: c2 and c3 move down one; c3 publishes first, into c2's old slot.
        publish("c3", 2, at: 1)
        publish("c2", 2, at: 0)
        publish("c3", 3, at: 2)  // decided before the renumbering
        publish("c4", 1, at: 2)
        publish("c1", 2, at: 3)  // back again
        #expect(sink.malformedUpdates == 0)
        let numbered = sink.updates.map { "\($0.status.conversation)#\($0.sequence)" }
        #expect(numbered == ["c1#1", "c2#1", "c3#1", "c3#2", "c2#2", "c3#3", "c4#1", "c1#2"])
        #expect(["c1", "c2", "c3", "c4", "c5"].map(publisher.sequence(of:)) == [2, 2, 3, 1, 0])
    }

    /// Coalescing holds statuses by message, not by the engine's key: after a renumbering, a key
    /// decided before can name another conversation's message with the same sequence. Each
    /// message's last status goes out once, on its own topic, at its first window's end.
    @Test func coalescingAcrossARenumberingNeitherDropsNorReordersAMessage() {
        let sink = RecordingSink()
        let publisher = StatusPublisher(sink: sink, windowMilliseconds: 50, publisherRun: 7, onPublished: { _ in })
        let x = Self.status("c2", 5)
        let a = Self.status("c3", 5)
        var b = Self.status("c3", 5)
        b.readCount = 1
        // c1, c2, c3 at indexes 0, 1, 2; then c1 is dropped and c3's newer status comes with
        // index 1, c2's before.
        publisher.submit([x], keys: [1 << 32 | 5], now: 0)
        publisher.submit([a], keys: [2 << 32 | 5], now: 10)
        publisher.submit([b], keys: [1 << 32 | 5], now: 30)
        publisher.flushDue(now: 100)
        #expect(sink.malformedUpdates == 0)
        #expect(sink.updates.map { "\($0.status.conversation)#\($0.sequence)" } == ["c2#1", "c3#1"])
        #expect(sink.updates.map(\.status) == [x, b])
    }

    @Test func aLimitBelowOneIsRefused() throws {
        var configuration = ServiceConfiguration(dataDirectory: "/nonexistent")
        #expect(configuration.publishQueueLimit == 100_000)
        configuration.publishQueueLimit = 0
        let error = try #require(throws: ServiceError.self) { try configuration.validate() }
        #expect(error.code == .configuration)
        #expect(error.message == "publish queue limit must be at least 1, got 0")
        configuration.publishQueueLimit = 1
        try configuration.validate()
    }

    @Test(.timeLimit(.minutes(1)))
    func aThreadThatCannotStartIsAnErrorAndStopDoesNotWaitForIt() throws {
        let counters = ServiceCounters()
        let thread = PublishingThread(
            sink: StalledSink(),
            limit: 10,
            counters: counters,
            logger: Self.logger,
            threads: .failing(["receiptd-pub"])
        )
        let error = try #require(throws: ServiceError.self) { try thread.start() }
        #expect(error.code == .system)
        #expect(error.message == "cannot start the receiptd-pub thread")
        #expect(error.cause as? SystemCallError == SystemCallError(call: "pthread_create", errno: EAGAIN))
        // Before, `stop` waited for a thread that never ran: this returned never.
        thread.stop()
    }
}
