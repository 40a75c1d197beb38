import Foundation
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Synchronization
import Testing
import ZeroMQ

/// Every frame a gateway sends is answered exactly once, however slowly it reads its replies:
/// a reply that cannot leave yet (the ROUTER's queue to that peer is full) waits for it, and is
/// never dropped. Raw DEALERs, as a gateway in C, Go or Python would pipeline frames.
@Suite(.serialized, .startsProcesses)
struct ReplyDeliveryTests {
    /// A raw DEALER that pipelines frames and reads replies only when told to.
    private final class PipeliningDealer {
        let socket: ZMQSocket

        /// - Parameter receiveHighWaterMark: Replies libzmq takes off the wire before the
        ///   application reads them; 1 makes a gateway that reads late push back at once.
        init(_ daemon: ReceiptdProcess, receiveHighWaterMark: Int32 = 1000) throws {
            socket = try ZMQSocket(context: daemon.context, type: .dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.setSendHighWaterMark(0)
            try socket.setReceiveHighWaterMark(receiveHighWaterMark)
            try socket.setReceiveTimeout(milliseconds: 10_000)
            try socket.connect(daemon.ingestEndpoint)
        }

        deinit { socket.close() }

        func send(_ events: [Event]) throws {
            _ = try socket.send([[], EventBatchCodec.encode(events)])
        }

        func receive() throws -> IngestReply {
            guard let frames = try socket.receiveMultipart() else {
                throw IntegrationError("no ingest reply within 10 s")
            }
            guard frames.count == 2, frames[0].isEmpty else {
                throw IntegrationError("an ingest reply of \(frames.count) frames")
            }
            return try IngestReply.decode(frames[1])
        }
    }

    /// Replies receiptd did not deliver, over every reason (before held replies, a full queue
    /// counted them as `would_block`).
    private static func repliesDropped(_ daemon: ReceiptdProcess) async throws -> UInt64 {
        try await daemon.client.stats(worker: 0).filter { $0.name == "receiptd.replies.dropped" }.reduce(0) {
            $0 + $1.value
        }
    }

    @Test("A gateway that reads its replies late gets every one of them, in order, and none is dropped")
    func lateReaderGetsEveryReply() async throws {
        let daemon = try await ReceiptdProcess()
        let received = try await daemon.counter("receiptd.frames.received", label: "ingest")
        let dealer = try PipeliningDealer(daemon, receiveHighWaterMark: 1)
        // Replies of about 10 KiB (50 rejections with a long detail each): far more than the
        // socket buffers hold, so the replies of the later frames back up inside receiptd.
        let conversation = "never-upserted-" + String(repeating: "x", count: 200)
        var events = EventFactory()
        let frames = 2600
        let burst = 100
        for first in stride(from: 0, to: frames, by: burst) {
            for frame in first..<(first + burst) {
                try dealer.send(
                    (0..<50).map { index in
                        events.make(.read(conversation: conversation, user: "u", message: "m-\(frame)-\(index)"))
                    }
                )
            }
            // Within the in-flight limit at all times: each burst is taken before the next goes.
            try await daemon.waitForCounter(
                "receiptd.frames.received",
                label: "ingest",
                toReach: received + UInt64(first + burst)
            )
        }
        for frame in 0..<frames {
            let reply = try dealer.receive()
            #expect(reply.error == nil, "frame \(frame): \(String(describing: reply.error))")
            guard case .rejected(let rejection) = reply.results.first else {
                Issue.record("frame \(frame): \(reply.results.first.map { "\($0)" } ?? "no result")")
                break
            }
            #expect(rejection.reason == .unknownConversation)
            #expect(reply.results.count == 50)
        }
        #expect(try await Self.repliesDropped(daemon) == 0, "no reply dropped, for any reason")
        #expect(try await daemon.counter("receiptd.replies.held") > 0, "the late replies waited inside receiptd")
    }

    @Test(
        "A gateway at the documented in-flight limit, on a busy machine, gets one reply per frame",
        // The limit counts the wait for a slot of `.startsProcesses` as well as the test.
        .timeLimit(.minutes(10))
    )
    func pipeliningAtTheLimitUnderContention() async throws {
        let daemon = try await ReceiptdProcess()
        let conversation = "contended"
        var events = EventFactory()
        _ = try await daemon.ingest([
            events.make(.conversationUpserted(conversation: conversation, kind: .group, members: ["a", "b"]))
        ])
        // Two threads spinning beside the gateway and the daemon on a 2-core machine.
        let spinning = SpinningThreads(count: 2)
        defer { spinning.stop() }
        let dealer = try PipeliningDealer(daemon)
        let inFlightLimit = 1000
        var message = 0
        for round in 0..<3 {
            let frames = 10_000
            var sent = 0
            var answered = 0
            while answered < frames {
                while sent < frames, sent - answered < inFlightLimit {
                    message += 1
                    try dealer.send([
                        events.make(
                            .messageSent(
                                conversation: conversation,
                                message: "m\(message)",
                                sender: "a",
                                isSystem: false
                            )
                        )
                    ])
                    sent += 1
                }
                // Now and then the gateway's thread is descheduled for a while, as on a loaded host.
                if answered % 1000 == 999 { usleep(20_000) }
                let reply = try dealer.receive()
                #expect(reply.error == nil && reply.results == [.accepted(held: false)], "round \(round): \(reply)")
                answered += 1
            }
        }
        #expect(try await Self.repliesDropped(daemon) == 0, "no reply dropped, for any reason")
    }
}

/// Threads that keep the CPU busy until stopped: the contention a loaded gateway host sees.
private final class SpinningThreads: Sendable {
    private let stopped = Atomic<Bool>(false)

    init(count: Int) {
        for _ in 0..<count {
            Thread { [self] in
                while !stopped.load(ordering: .relaxed) {}
            }
            .start()
        }
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
    }
}
