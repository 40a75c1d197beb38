import Foundation
import Histogram
import ReceiptsCore
import ReceiptsWire
import Synchronization
import ZeroMQ

/// A subscriber on its own thread that timestamps every status update on arrival and records
/// the time since the frame that caused it was sent (or scheduled), in nanoseconds.
///
/// Measures the transport: a raw SUB stamps updates on arrival, with no ReceiptsClient queue or repair in between.
final class UpdateCollector: Sendable {
    /// What the collector saw.
    struct Report: Sendable {
        var latency = Histogram<UInt64>.latencyNanoseconds()
        var updates = 0
        var matched = 0
        var unmatched = 0
        /// Updates missing by sequence number (dropped at a high-water mark).
        var gaps = 0
        /// Monotonic time of the last update received.
        var lastArrival: UInt64 = 0
    }

    private let stopRequested = Atomic<Bool>(false)
    private let ready = Atomic<Bool>(false)
    private let finished = Mutex<Report?>(nil)
    private let failure = Mutex<String?>(nil)

    /// Starts the thread; returns once its SUB socket is connected and subscribed.
    init(
        context: ZMQContext,
        endpoint: String,
        curve: CurveClientKeys?,
        expectations: [UInt64: Int32],
        sendTimes: SendTimes,
        conversations: Int
    ) {
        let thread = Thread { [self] in
            do {
                try self.collect(
                    context: context,
                    endpoint: endpoint,
                    curve: curve,
                    expectations: expectations,
                    sendTimes: sendTimes,
                    conversations: conversations
                )
            } catch {
                self.failure.withLock { $0 = "\(error)" }
                self.ready.store(true, ordering: .releasing)
                self.finished.withLock { $0 = Report() }
            }
        }
        thread.name = "loadgen-collector"
        thread.start()
        while !ready.load(ordering: .acquiring) { usleep(1000) }
        // The slow joiner (zguide ch. 5): the subscription needs a moment to reach the publisher.
        usleep(300_000)
    }

    /// Asks the thread to stop once it has seen every expected update or `quietSeconds` of silence.
    func finish() throws -> Report {
        stopRequested.store(true, ordering: .releasing)
        while true {
            if let report = finished.withLock({ $0 }) {
                if let failure = failure.withLock({ $0 }) { throw LoadgenError(.protocolViolation, failure) }
                return report
            }
            usleep(2000)
        }
    }

    private func collect(
        context: ZMQContext,
        endpoint: String,
        curve: CurveClientKeys?,
        expectations: [UInt64: Int32],
        sendTimes: SendTimes,
        conversations: Int
    ) throws {
        let socket = try ZMQSocket(context: context, type: .sub)
        defer { socket.close() }
        if let curve { try socket.setCurveClient(curve) }
        try socket.setReceiveHighWaterMark(0)
        try socket.setReceiveTimeout(milliseconds: 100)
        // Every conversation topic (4 hex digits first), and no user topic ("u:").
        for prefix in Partitioning.conversationTopicPrefixes { try socket.subscribe(prefix) }
        try socket.connect(endpoint)
        ready.store(true, ordering: .releasing)
        var report = Report()
        var lastSequence = [UInt64](repeating: 0, count: conversations)
        var publisherRun: UInt64 = 0
        var stopSeen: UInt64 = 0
        while true {
            let received = try socket.receiveMultipart { frames -> StatusUpdate? in
                guard frames.count == 2 else { return nil }
                return try? StatusUpdate.decode(frames[1])
            }
            let now = Monotonic.now()
            guard let received else {
                if stopRequested.load(ordering: .acquiring) {
                    if stopSeen == 0 { stopSeen = now }
                    if report.matched >= expectations.count || now - stopSeen > 2_000_000_000 { break }
                }
                continue
            }
            guard let update = received else {
                report.unmatched += 1
                continue
            }
            report.updates += 1
            report.lastArrival = now
            if publisherRun != update.publisherRun {
                publisherRun = update.publisherRun
                for i in lastSequence.indices { lastSequence[i] = 0 }
            }
            var matched = false
            if let key = UpdateKey.make(update.status) {
                let conversation = Int(key >> 40)
                if conversation < lastSequence.count {
                    let last = lastSequence[conversation]
                    if last != 0, update.sequence > last + 1 { report.gaps += Int(update.sequence - last - 1) }
                    lastSequence[conversation] = update.sequence
                }
                if let frame = expectations[key] {
                    let sent = sendTimes[Int(frame)]
                    if sent != 0, now >= sent {
                        _ = report.latency.record(now - sent)
                        report.matched += 1
                        matched = true
                    }
                }
            }
            if !matched { report.unmatched += 1 }
            if report.matched >= expectations.count, stopRequested.load(ordering: .acquiring) { break }
        }
        finished.withLock { $0 = report }
    }
}
