import ReceiptsCore
import ReceiptsWire

/// One encoded `EventBatch` frame and the gateway that sends it.
struct Frame: Sendable {
    var gateway: Int
    var bytes: [UInt8]
    var events: Int
}

/// A workload encoded ahead of time, so that sending costs the load generator nothing but the
/// socket call, and every baseline sends exactly the same bytes.
struct FrameSet: Sendable {
    /// Upserts that create the conversations (sent, acknowledged, before the clock starts).
    var setup: [Frame]
    /// The measured frames, gateways interleaved round-robin.
    var frames: [Frame]
    /// Events in `frames`.
    var eventCount: Int
    /// Update key → index of the frame holding the event that causes it (when tracked).
    var expectations: [UInt64: Int32]
    /// (conversation, member) pairs the setup creates.
    var memberCount: Int
    /// (message, recipient) pairs of the messages in `frames`.
    var receiptCount: Int

    /// Events in the setup frames.
    var setupEventCount: Int { setup.reduce(0) { $0 + $1.events } }

    /// The same set with only `range` of the measured frames (to load a workload in steps).
    func slice(_ range: Range<Int>) -> FrameSet {
        var copy = self
        copy.frames = Array(frames[range])
        copy.eventCount = copy.frames.reduce(0) { $0 + $1.events }
        return copy
    }

    /// Bytes of all measured frames.
    var byteCount: Int { frames.reduce(0) { $0 + $1.bytes.count } }

    /// Generates and encodes `events` events in frames of `batchSize` events.
    /// - Parameters:
    ///   - shape: The workload.
    ///   - events: Events in the measured frames (rounded up to whole frames per gateway turn).
    ///   - batchSize: Events per frame (1 = single-event frames).
    ///   - trackUpdates: Record which frame causes which update (latency runs).
    /// A gateway's setup events in frames of at most 1000.
    static func setupFrames(_ events: [Event], gateway: Int) -> [Frame] {
        stride(from: 0, to: events.count, by: 1000).map { start in
            let slice = Array(events[start..<min(start + 1000, events.count)])
            return Frame(gateway: gateway, bytes: EventBatchCodec.encode(slice), events: slice.count)
        }
    }

    static func make(shape: WorkloadShape, events: Int, batchSize: Int, trackUpdates: Bool) -> FrameSet {
        var streams = (0..<shape.gateways).map { GatewayStream(gateway: $0, shape: shape) }
        var setup: [Frame] = []
        for g in streams.indices {
            setup += setupFrames(streams[g].setupEvents(), gateway: g)
        }
        var frames: [Frame] = []
        frames.reserveCapacity(events / batchSize + shape.gateways)
        var expectations: [UInt64: Int32] = [:]
        if trackUpdates { expectations.reserveCapacity(events) }
        var produced = 0
        var batch: [Event] = []
        batch.reserveCapacity(batchSize)
        while produced < events {
            let g = frames.count % shape.gateways
            batch.removeAll(keepingCapacity: true)
            for _ in 0..<batchSize {
                let (event, expects) = streams[g].next()
                batch.append(event)
                if trackUpdates, let expects { expectations[expects] = Int32(frames.count) }
            }
            frames.append(Frame(gateway: g, bytes: EventBatchCodec.encode(batch), events: batch.count))
            produced += batch.count
        }
        return FrameSet(
            setup: setup,
            frames: frames,
            eventCount: produced,
            expectations: expectations,
            memberCount: streams.reduce(0) { $0 + $1.memberCount },
            receiptCount: streams.reduce(0) { $0 + $1.receipts }
        )
    }
}
