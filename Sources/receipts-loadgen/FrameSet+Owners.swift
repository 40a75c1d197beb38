import ReceiptsCore
import ReceiptsWire

extension FrameSet {
    /// The workload of `make(shape:events:batchSize:trackUpdates:)` routed as a gateway routes
    /// it: one set per worker, holding only the events of the conversations that worker owns
    /// (`Partitioning.owner` over `workers`).
    ///
    /// Each gateway keeps one batch per worker and a frame leaves when its batch holds
    /// `batchSize` events, so every frame but the last few is full, whatever the worker count;
    /// with one worker the frames are exactly those of `make`. A conversation's events come from
    /// one gateway and go to one worker, in order. Update tracking, member and receipt counts
    /// are left out (throughput rows only).
    /// - Parameters:
    ///   - shape: The workload.
    ///   - events: Events in the measured frames over all workers (rounded up to whole frames).
    ///   - batchSize: Events per frame.
    ///   - workers: The worker count the events are routed over.
    /// - Returns: The set of worker `i` at index `i`.
    static func make(shape: WorkloadShape, events: Int, batchSize: Int, workers: Int) -> [FrameSet] {
        var sets = Array(
            repeating: FrameSet(
                setup: [],
                frames: [],
                eventCount: 0,
                expectations: [:],
                memberCount: 0,
                receiptCount: 0
            ),
            count: workers
        )
        func owner(_ event: Event) -> Int {
            event.kind.conversation.map { Partitioning.owner(of: $0, workerCount: workers) } ?? 0
        }
        var streams = (0..<shape.gateways).map { GatewayStream(gateway: $0, shape: shape) }
        for g in streams.indices {
            var byOwner = Array(repeating: [Event](), count: workers)
            for event in streams[g].setupEvents() { byOwner[owner(event)].append(event) }
            for (worker, events) in byOwner.enumerated() {
                sets[worker].setup += FrameSet.setupFrames(events, gateway: g)
            }
        }
        var pending = Array(repeating: Array(repeating: [Event](), count: workers), count: shape.gateways)
        func emit(gateway: Int, worker: Int) {
            let batch = pending[gateway][worker]
            sets[worker].frames.append(
                Frame(gateway: gateway, bytes: EventBatchCodec.encode(batch), events: batch.count)
            )
            sets[worker].eventCount += batch.count
            pending[gateway][worker].removeAll(keepingCapacity: true)
        }
        var produced = 0
        var turn = 0
        while produced < events {
            // Gateways take turns, as in `make`; a turn ends when one of its batches is full.
            let g = turn % shape.gateways
            turn += 1
            while true {
                let (event, _) = streams[g].next()
                let worker = owner(event)
                pending[g][worker].append(event)
                produced += 1
                if pending[g][worker].count == batchSize {
                    emit(gateway: g, worker: worker)
                    break
                }
            }
        }
        for g in 0..<shape.gateways {
            for worker in 0..<workers where !pending[g][worker].isEmpty { emit(gateway: g, worker: worker) }
        }
        return sets
    }
}
