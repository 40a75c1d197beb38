import Foundation
import ReceiptsCore
import ReceiptsWire
import Testing
import ZeroMQ

/// Acknowledged means durable: graceful shutdown and SIGKILL at random moments, with
/// frequent compaction, never lose an acknowledged event nor apply one twice.
@Suite(.serialized)
struct DurabilityTests {
    /// A gateway that keeps a window of batches in flight on a DEALER and records which
    /// events were acknowledged as accepted.
    final class PipelinedGateway {
        private var socket: ZMQSocket
        private var events: EventFactory
        /// Conversation -> acknowledged message ids, across restarts.
        private(set) var acknowledged: [String: [String]] = [:]
        private(set) var acknowledgedBatches: [[Event]] = []
        private var inFlight: [[Event]] = []
        private let conversations: [String]
        private var nextMessage = 0

        init(daemon: ReceiptdProcess, conversations: [String], source: String) throws {
            socket = try Self.connect(daemon)
            events = EventFactory(source: source)
            self.conversations = conversations
        }

        deinit { socket.close() }

        private static func connect(_ daemon: ReceiptdProcess) throws -> ZMQSocket {
            let socket = try ZMQSocket(context: daemon.context, type: .dealer)
            try socket.setLinger(milliseconds: 0)
            try socket.setReceiveTimeout(milliseconds: 5000)
            try socket.connect(daemon.ingestEndpoint)
            return socket
        }

        /// Talks to a restarted daemon; batches still in flight were never acknowledged.
        func reconnect(to daemon: ReceiptdProcess) throws {
            socket.close()
            inFlight.removeAll()
            socket = try Self.connect(daemon)
        }

        /// Creates the conversations (acknowledged before returning).
        func setUp() throws {
            let batch = conversations.map { conversation in
                events.make(.conversationUpserted(conversation: conversation, kind: .group, members: ["s", "r1", "r2"]))
            }
            try send(batch)
            try receiveOne()
        }

        /// Sends one batch of new messages, each with a read by r1, without waiting.
        func sendBatch(size: Int) throws {
            var batch: [Event] = []
            for _ in 0..<size {
                nextMessage += 1
                let conversation = conversations[nextMessage % conversations.count]
                batch.append(events.make(.messageSent(conversation: conversation, message: "m\(nextMessage)", sender: "s", isSystem: false)))
                batch.append(events.make(.read(conversation: conversation, user: "r1", message: "m\(nextMessage)")))
            }
            try send(batch)
        }

        private func send(_ batch: [Event]) throws {
            _ = try socket.send([[], EventBatchCodec.encode(batch)])
            inFlight.append(batch)
        }

        /// Waits for the oldest batch's acknowledgement and records it.
        /// - Returns: false if none came within the timeout.
        @discardableResult
        func receiveOne(timeoutMilliseconds: Int32 = 5000) throws -> Bool {
            try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
            guard let frames = try socket.receiveMultipart(), let body = frames.last else { return false }
            let reply = try IngestReply.decode(body)
            let batch = inFlight.removeFirst()
            #expect(reply.results.count == batch.count)
            for (event, outcome) in zip(batch, reply.results) {
                #expect(outcome == .accepted(held: false), "\(event.kind) -> \(outcome)")
                if case .messageSent(let conversation, let message, _, _) = event.kind {
                    acknowledged[conversation, default: []].append(message)
                }
            }
            acknowledgedBatches.append(batch)
            return true
        }

        var inFlightCount: Int { inFlight.count }
        var acknowledgedMessageCount: Int { acknowledged.values.reduce(0) { $0 + $1.count } }
    }

    /// Every acknowledged message is there exactly once, read by r1, in gap-free sequence order.
    private func verifyRecovered(_ daemon: ReceiptdProcess, _ gateway: PipelinedGateway) throws {
        for (conversation, messages) in gateway.acknowledged {
            guard case .snapshot(let snapshot, _, _) = try daemon.query(.snapshot(conversation: conversation, limit: 0)) else {
                throw IntegrationError("no snapshot of \(conversation)")
            }
            let present = Set(snapshot.messages.map(\.message))
            let missing = messages.filter { !present.contains($0) }
            #expect(missing.isEmpty, "acknowledged but lost in \(conversation): \(missing.prefix(5))")
            #expect(snapshot.messages.map(\.sequence) == (0..<snapshot.messages.count).map { UInt64($0 + 1) }, "gap-free sequence")
            #expect(Set(snapshot.messages.map(\.message)).count == snapshot.messages.count, "a message applied twice")
            for status in snapshot.messages {
                #expect(status.readCount == 1, "\(status.message) read once by r1, got \(status.readCount)")
            }
        }
    }

    @Test("SIGTERM with events in flight: every acknowledged event is present after restart")
    func gracefulShutdownKeepsAcknowledged() throws {
        let daemon = try ReceiptdProcess()
        let gateway = try PipelinedGateway(daemon: daemon, conversations: ["t1", "t2", "t3"], source: "sigterm")
        try gateway.setUp()
        for _ in 0..<30 { try gateway.sendBatch(size: 20) }
        for _ in 0..<10 { try gateway.receiveOne() }
        // Stop with batches in flight; the ones the daemon took in are still acknowledged.
        #expect(daemon.terminate() == 0, "graceful shutdown exits 0: \(daemon.standardError().suffix(2000))")
        while gateway.inFlightCount > 0, try gateway.receiveOne(timeoutMilliseconds: 500) {}
        #expect(gateway.acknowledgedMessageCount >= 200)

        let restarted = try ReceiptdProcess(dataDirectory: daemon.dataDirectory)
        try verifyRecovered(restarted, gateway)
    }

    @Test("SIGKILL at random moments, during compaction too: acknowledged events survive, none applied twice")
    func crashLoopKeepsAcknowledged() throws {
        var generator = SystemRandomNumberGenerator()
        let arguments = ["--compact-bytes", "32768"]
        var daemon = try ReceiptdProcess(arguments: arguments)
        let owner = daemon  // owns and finally removes the data directory
        let gateway = try PipelinedGateway(daemon: daemon, conversations: ["k1", "k2", "k3", "k4"], source: "crash")
        try gateway.setUp()
        let deadline = Date().addingTimeInterval(90)
        var rounds = 0
        while rounds < 6, Date() < deadline {
            rounds += 1
            for _ in 0..<Int.random(in: 20...120, using: &generator) {
                try gateway.sendBatch(size: Int.random(in: 1...30, using: &generator))
                if gateway.inFlightCount > 8 { try gateway.receiveOne() }
            }
            usleep(UInt32.random(in: 0...20_000, using: &generator))
            daemon.kill9()

            daemon = try ReceiptdProcess(dataDirectory: owner.dataDirectory, arguments: arguments)
            try gateway.reconnect(to: daemon)
            try verifyRecovered(daemon, gateway)

            // Re-sending acknowledged batches is recognised as duplicates, never applied twice.
            let resend = try ZMQSocket(context: daemon.context, type: .dealer)
            defer { resend.close() }
            try resend.setLinger(milliseconds: 0)
            try resend.setReceiveTimeout(milliseconds: 5000)
            try resend.connect(daemon.ingestEndpoint)
            for batch in gateway.acknowledgedBatches.suffix(10) {
                _ = try resend.send([[], EventBatchCodec.encode(batch)])
                let reply = try IngestReply.decode(try #require(try resend.receiveMultipart()?.last))
                #expect(reply.results.allSatisfy { $0 == .duplicate }, "round \(rounds): a resent batch was applied again")
            }
        }
        #expect(gateway.acknowledgedMessageCount > 0)
        let files = try FileManager.default.contentsOfDirectory(atPath: owner.dataDirectory)
        #expect(files.contains { $0.hasPrefix("snapshot-") }, "compaction ran during the loop: \(files)")
        #expect(daemon.terminate() == 0)
    }
}
