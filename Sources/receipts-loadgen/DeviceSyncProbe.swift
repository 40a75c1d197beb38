import Foundation
import ReceiptsCore
import ReceiptsWire
import Synchronization
import ZeroMQ

/// One user's two devices, on a thread of their own beside the load: one reads a new message
/// (a raw REQ on the ingest endpoint, as a gateway in another language sends it), the other
/// follows the user's topic by its whole frame (a raw SUB) and times how long the read state
/// takes to reach it. Each round sends a message, then the read, and waits for the read state
/// that covers it; rounds are 20 ms apart.
final class DeviceSyncProbe: Sendable {
    static let conversation = "device-sync"
    static let (sender, reader) = ("device-sync-sender", "device-sync-reader")

    private let stopRequested = Atomic<Bool>(false)
    /// Read → read state on the other device, in microseconds, one per round; or the failure.
    private let outcome = Mutex<(latencies: [Double], failure: String?)>(([], nil))
    /// Set once both devices are attached (nil) or could not be (the error).
    private let started = Mutex<String??>(nil)
    private let done = Atomic<Bool>(false)

    /// Starts the thread and returns once both devices are attached (the worker announces the
    /// user's state when the SUB's subscription arrives, which proves it).
    /// - Throws: `LoadgenError` if a socket cannot be made or the subscription is never announced.
    init(context: ZMQContext, ingestEndpoint: String, publishEndpoint: String) throws {
        let thread = Thread { [self] in
            defer { done.store(true, ordering: .releasing) }
            do {
                try run(context: context, ingestEndpoint: ingestEndpoint, publishEndpoint: publishEndpoint)
            } catch {
                started.withLock { $0 = $0 ?? .some("\(error)") }
                outcome.withLock { $0.failure = "\(error)" }
            }
        }
        thread.name = "loadgen-device-sync"
        thread.start()
        while true {
            if let attached = started.withLock({ $0 }) {
                if let failure = attached { throw LoadgenError(.protocolViolation, failure) }
                return
            }
            usleep(1000)
        }
    }

    private func run(context: ZMQContext, ingestEndpoint: String, publishEndpoint: String) throws {
        let requester = try ZMQSocket(context: context, type: .req)
        defer { requester.close() }
        let device = try ZMQSocket(context: context, type: .sub)
        defer { device.close() }
        try requester.setReceiveTimeout(milliseconds: 10_000)
        try requester.connect(ingestEndpoint)
        var sequence: UInt64 = 0
        func send(_ kind: EventKind) throws {
            sequence += 1
            _ = try requester.send([
                EventBatchCodec.encode([Event(id: EventID(source: "device-sync", sequence: sequence), kind: kind)])
            ])
        }
        func replied() throws {
            guard try requester.receiveMultipart() != nil else {
                throw LoadgenError(.protocolViolation, "device sync: no ingest reply within 10 s")
            }
        }
        try send(
            .conversationUpserted(conversation: Self.conversation, kind: .direct, members: [Self.sender, Self.reader])
        )
        try replied()
        try device.setReceiveTimeout(milliseconds: 10_000)
        try device.subscribe(Partitioning.exactUserTopic(for: Self.reader))
        try device.connect(publishEndpoint)
        guard try device.receiveMultipart() != nil else {
            throw LoadgenError(.protocolViolation, "device sync: the reader's topic was not announced in 10 s")
        }
        started.withLock { $0 = .some(nil) }
        var round: UInt64 = 0
        while !stopRequested.load(ordering: .acquiring) {
            round += 1
            try send(
                .messageSent(
                    conversation: Self.conversation,
                    message: "s\(round)",
                    sender: Self.sender,
                    isSystem: false
                )
            )
            try replied()
            let sent = ContinuousClock.now
            try send(.read(conversation: Self.conversation, user: Self.reader, message: "s\(round)"))
            var arrived = false
            while !arrived, let frames = try device.receiveMultipart(), frames.count == 2 {
                arrived = try ReadStateUpdate.decode(frames[1]).change.state.readUpTo >= round
            }
            guard arrived else { throw LoadgenError(.protocolViolation, "device sync: round \(round) lost") }
            let elapsed = ContinuousClock.now - sent
            try replied()
            outcome.withLock {
                $0.latencies.append(
                    Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
                )
            }
            usleep(20_000)
        }
    }

    /// Stops the thread and returns the latencies of its rounds (microseconds).
    /// - Throws: `LoadgenError` if a round failed.
    func finish() throws -> [Double] {
        stopRequested.store(true, ordering: .releasing)
        while !done.load(ordering: .acquiring) { usleep(1000) }
        let (latencies, failure) = outcome.withLock { $0 }
        if let failure { throw LoadgenError(.protocolViolation, failure) }
        return latencies
    }
}
