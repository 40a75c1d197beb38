import Foundation
import Histogram
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsWire
import ZeroMQ

/// Plays a `FrameSet` to a running worker: one thread owns every gateway socket (a DEALER or
/// a PUB per gateway) and paces or floods the frames, while an `UpdateCollector` timestamps
/// the status updates.
///
/// Measures the transport: raw frames on the sockets, not ReceiptsClient (`ClientDriver` times that path).
struct LoadDriver {
    let context: ZMQContext
    let ingestEndpoint: String
    let ingestSubscribeEndpoint: String
    let publishEndpoint: String
    /// Answers the stats queries of fire-and-forget runs (nil: a peer that answers none, acknowledged runs only).
    let queries: ReceiptsClient?
    /// CURVE keys for every gateway and subscriber socket, when receiptd requires them.
    let curve: CurveClientKeys?

    init(context: ZMQContext, daemon: DaemonProcess) {
        self.context = context
        ingestEndpoint = daemon.ingestEndpoint
        ingestSubscribeEndpoint = daemon.ingestSubscribeEndpoint
        publishEndpoint = daemon.publishEndpoint
        queries = daemon.client
        curve = daemon.clientKeys
    }

    /// A driver of a peer that serves acknowledged ingest and publishes updates but answers no
    /// queries (`WireLimitBaseline`'s receiver), without CURVE.
    init(context: ZMQContext, ingestEndpoint: String, publishEndpoint: String) {
        self.context = context
        self.ingestEndpoint = ingestEndpoint
        ingestSubscribeEndpoint = ""
        self.publishEndpoint = publishEndpoint
        queries = nil
        curve = nil
    }

    /// A driver of a receiptd the harness did not start (`run`).
    /// - Throws: `ReceiptsClientError` if the query client cannot start.
    init(
        context: ZMQContext,
        ingestEndpoint: String,
        ingestSubscribeEndpoint: String,
        publishEndpoint: String,
        queryEndpoint: String,
        curve: CurveClientKeys?
    ) throws {
        self.context = context
        self.ingestEndpoint = ingestEndpoint
        self.ingestSubscribeEndpoint = ingestSubscribeEndpoint
        self.publishEndpoint = publishEndpoint
        self.curve = curve
        queries = try ReceiptsClient.harness(
            worker: Cluster.Worker(ingest: ingestEndpoint, query: queryEndpoint, publish: publishEndpoint),
            queryTimeoutMilliseconds: 10_000,
            curve: curve
        )
    }

    /// Sends the setup frames acknowledged, then the measured frames as `options` say.
    /// - Parameter beforeMeasuring: Called after the setup, just before the clock starts (several
    ///   drives of one measurement meet there, so that none times another's setup).
    func drive(
        _ set: FrameSet,
        gateways: Int,
        conversations: Int,
        options: DriveOptions,
        beforeMeasuring: () throws -> Void = {}
    ) throws -> DriveResult {
        let dealers = try (0..<gateways).map { g in
            let socket = try ZMQSocket(context: context, type: .dealer)
            try socket.setRoutingID("gw\(g)-\(getpid())-\(Monotonic.now() % 1_000_000)")
            try socket.setSendHighWaterMark(0)
            try socket.setReceiveHighWaterMark(0)
            if let curve { try socket.setCurveClient(curve) }
            try socket.connect(ingestEndpoint)
            return socket
        }
        defer { for dealer in dealers { dealer.close() } }
        var tally = Tally(gateways: gateways)
        try sendAcknowledged(set.setup, on: dealers, options: DriveOptions(window: 64), tally: &tally, times: nil)
        tally = Tally(gateways: gateways, measuringAcknowledgements: options.trackLatency)

        let sendTimes = SendTimes(count: set.frames.count)
        let collector =
            options.trackLatency
            ? UpdateCollector(
                context: context,
                endpoint: publishEndpoint,
                curve: curve,
                expectations: set.expectations,
                sendTimes: sendTimes,
                conversations: conversations
            )
            : nil
        try beforeMeasuring()
        var result: DriveResult
        if options.acknowledged {
            let (start, end) = try sendAcknowledged(
                set.frames,
                on: dealers,
                options: options,
                tally: &tally,
                times: sendTimes
            )
            result = DriveResult(
                events: set.eventCount,
                seconds: Monotonic.seconds(from: start, to: end),
                startedAt: start,
                finishedAt: end,
                accepted: tally.accepted,
                duplicates: tally.duplicates,
                rejected: tally.rejected
            )
            result.acknowledgementLatency = tally.acknowledgements?.latency
        } else {
            let before = try counters()
            // The PUBs stay open until everything arrived: closing one drops what it still queues.
            let (start, publishers) = try sendFireAndForget(
                set.frames,
                gateways: gateways,
                options: options,
                times: sendTimes
            )
            defer { for publisher in publishers { publisher.close() } }
            let target = Self.handled(before) + UInt64(set.eventCount)
            var lastHandled: UInt64 = 0
            var lastChange = Monotonic.now()
            while true {
                let handled = Self.handled(try counters())
                if handled >= target { break }
                if handled != lastHandled {
                    lastHandled = handled
                    lastChange = Monotonic.now()
                } else if Monotonic.now() - lastChange > 2_000_000_000 {
                    break
                }
                usleep(5000)
            }
            // A batch of duplicates behind everything applied: its reply waits for all of it to be durable.
            var marker = Tally(gateways: gateways)
            _ = try sendAcknowledged(
                Array(set.setup.prefix(1)),
                on: dealers,
                options: options,
                tally: &marker,
                times: nil
            )
            let end = Monotonic.now()
            let after = try counters()
            let accepted = Int((after["receiptd.events.accepted"] ?? 0) - (before["receiptd.events.accepted"] ?? 0))
            let duplicates =
                Int((after["receiptd.events.duplicate"] ?? 0) - (before["receiptd.events.duplicate"] ?? 0))
                - marker.duplicates
            let handled = Int(Self.handled(after) - Self.handled(before)) - marker.events
            result = DriveResult(
                events: set.eventCount,
                seconds: Monotonic.seconds(from: start, to: end),
                accepted: accepted,
                duplicates: duplicates,
                rejected: handled - accepted - duplicates,
                lost: set.eventCount - handled
            )
        }
        result.updates = try collector?.finish()
        return result
    }

    /// The worker's counters, by "name" or "name{label}".
    private func counters() throws -> [String: UInt64] {
        guard let queries else { throw LoadgenError(.process, "this peer answers no stats queries") }
        let counters = try BlockingWait.run { try await queries.stats(worker: 0) }
        var byName: [String: UInt64] = [:]
        for counter in counters {
            byName[counter.label.isEmpty ? counter.name : "\(counter.name){\(counter.label)}"] = counter.value
        }
        return byName
    }

    /// Events the worker has handled so far: accepted, duplicate and rejected.
    private static func handled(_ counters: [String: UInt64]) -> UInt64 {
        counters.filter {
            $0.key == "receiptd.events.accepted" || $0.key == "receiptd.events.duplicate"
                || $0.key.hasPrefix("receiptd.events.rejected")
        }
        .values.reduce(0, +)
    }

    /// Outcome counts and frames in flight per gateway.
    private struct Tally {
        var outstanding: [Int]
        var inFlight = 0
        var accepted = 0
        var duplicates = 0
        var rejected = 0
        var events = 0
        var lastReply: UInt64 = 0
        /// While acknowledgement latency is measured: the frames in flight and the latencies.
        var acknowledgements: AcknowledgementTimes?

        /// Per gateway, when each frame in flight was sent (or due), oldest first (a connection's
        /// replies come in its frames' order), and from each frame's send (or due time) to its
        /// reply, at the gateway, in nanoseconds.
        struct AcknowledgementTimes {
            var sent: [[UInt64]]
            var latency = Histogram<UInt64>.latencyNanoseconds()
        }

        init(gateways: Int, measuringAcknowledgements: Bool = false) {
            outstanding = Array(repeating: 0, count: gateways)
            if measuringAcknowledgements {
                acknowledgements = AcknowledgementTimes(sent: Array(repeating: [], count: gateways))
            }
        }

        mutating func count(_ reply: IngestReply, gateway: Int, at now: UInt64) {
            if let sendTime = acknowledgements?.sent[gateway].first {
                acknowledgements?.sent[gateway].removeFirst()
                acknowledgements?.latency.record(now > sendTime ? now - sendTime : 0)
            }
            outstanding[gateway] -= 1
            inFlight -= 1
            events += reply.results.count
            for outcome in reply.results {
                switch outcome {
                case .accepted: accepted += 1
                case .duplicate: duplicates += 1
                case .rejected: rejected += 1
                }
            }
            if reply.error != nil { rejected += 1 }
        }
    }

    /// Sends frames over the DEALERs with at most `window` in flight per gateway, pacing them
    /// when a rate is set; returns when every reply is in.
    ///
    /// Measures the transport: raw frames on DEALERs, as encoded, where ReceiptsClient would re-batch them.
    /// - Returns: Monotonic times of the first send and the last reply.
    @discardableResult
    private func sendAcknowledged(
        _ frames: [Frame],
        on dealers: [ZMQSocket],
        options: DriveOptions,
        tally: inout Tally,
        times: SendTimes?
    ) throws -> (UInt64, UInt64) {
        var poller = ZMQPoller()
        for dealer in dealers { _ = poller.add(dealer) }
        let start = Monotonic.now()
        let nanosecondsPerEvent = options.eventsPerSecond.map { 1e9 / $0 }
        var eventsBefore = 0
        for (index, frame) in frames.enumerated() {
            var sendTime = Monotonic.now()
            if let nanosecondsPerEvent {
                let scheduled = start + UInt64(Double(eventsBefore) * nanosecondsPerEvent)
                while true {
                    try receiveReplies(dealers, tally: &tally)
                    let now = Monotonic.now()
                    if now >= scheduled { break }
                    Monotonic.sleep(until: min(scheduled, now + 100_000))
                }
                // Latency counts from when the frame was due, not when it left: a stalled
                // sender must not hide the stall (coordinated omission).
                sendTime = scheduled
            }
            while tally.outstanding[frame.gateway] >= options.window {
                _ = try poller.poll(timeoutMilliseconds: 100)
                try receiveReplies(dealers, tally: &tally)
            }
            times?[index] = sendTime
            guard try dealers[frame.gateway].send([[], frame.bytes]) else {
                throw LoadgenError(.protocolViolation, "DEALER refused a frame")
            }
            tally.acknowledgements?.sent[frame.gateway].append(sendTime)
            tally.outstanding[frame.gateway] += 1
            tally.inFlight += 1
            eventsBefore += frame.events
        }
        let deadline = Monotonic.now() + 120_000_000_000
        while tally.inFlight > 0 {
            guard Monotonic.now() < deadline else {
                throw LoadgenError(.timeout, "\(tally.inFlight) batches unacknowledged after 120 s")
            }
            _ = try poller.poll(timeoutMilliseconds: 100)
            try receiveReplies(dealers, tally: &tally)
        }
        return (start, tally.lastReply == 0 ? Monotonic.now() : tally.lastReply)
    }

    private func receiveReplies(_ dealers: [ZMQSocket], tally: inout Tally) throws {
        for (gateway, dealer) in dealers.enumerated() {
            while let reply = try dealer.receiveMultipart(
                dontWait: true,
                { frames in
                    frames.count == 2 ? try? IngestReply.decode(frames[1]) : nil
                }
            ) {
                guard let reply else { throw LoadgenError(.protocolViolation, "undecodable ingest reply") }
                let now = Monotonic.now()
                tally.count(reply, gateway: gateway, at: now)
                tally.lastReply = now
            }
        }
    }

    /// Publishes the frames on one PUB per gateway (no replies), pacing them when a rate is set.
    ///
    /// Measures the transport: raw frames on PUBs, since ReceiptsClient has no fire-and-forget path.
    /// - Returns: The monotonic time of the first send, and the PUB sockets (still sending).
    private func sendFireAndForget(
        _ frames: [Frame],
        gateways: Int,
        options: DriveOptions,
        times: SendTimes
    ) throws -> (UInt64, [ZMQSocket]) {
        let publishers = try (0..<gateways).map { _ in
            let socket = try ZMQSocket(context: context, type: .pub)
            // Unbounded: back-pressure stays in this process instead of silently dropping here.
            try socket.setSendHighWaterMark(0)
            try socket.setLinger(milliseconds: 5000)
            if let curve { try socket.setCurveClient(curve) }
            try socket.connect(ingestSubscribeEndpoint)
            return socket
        }
        usleep(300_000)  // the slow joiner: let receiptd's subscription arrive
        let start = Monotonic.now()
        let nanosecondsPerEvent = options.eventsPerSecond.map { 1e9 / $0 }
        var eventsBefore = 0
        for (index, frame) in frames.enumerated() {
            var sendTime = Monotonic.now()
            if let nanosecondsPerEvent {
                let scheduled = start + UInt64(Double(eventsBefore) * nanosecondsPerEvent)
                Monotonic.sleep(until: scheduled)
                sendTime = scheduled
            }
            times[index] = sendTime
            _ = try publishers[frame.gateway].send([frame.bytes])
            eventsBefore += frame.events
        }
        return (start, publishers)
    }
}
