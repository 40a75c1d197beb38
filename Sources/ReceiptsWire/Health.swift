import CReceiptsProto

/// A worker's answer to a health query (`receipts.v1.Health`).
public struct Health: Hashable, Sendable {
    /// "serving" or "stopping".
    public var state: String
    /// This worker's ordinal.
    public var workerIndex: Int
    /// How many workers share the conversations.
    public var workerCount: Int
    /// Milliseconds since the worker started.
    public var uptimeMilliseconds: UInt64
    /// The worker's publisher run (the wire's `epoch`).
    public var publisherRun: UInt64

    /// Creates a health answer.
    /// - Parameters:
    ///   - state: "serving" or "stopping".
    ///   - workerIndex: This worker's ordinal.
    ///   - workerCount: How many workers share the conversations.
    ///   - uptimeMilliseconds: Milliseconds since start.
    ///   - publisherRun: The publisher run.
    public init(state: String, workerIndex: Int, workerCount: Int, uptimeMilliseconds: UInt64, publisherRun: UInt64) {
        self.state = state
        self.workerIndex = workerIndex
        self.workerCount = workerCount
        self.uptimeMilliseconds = uptimeMilliseconds
        self.publisherRun = publisherRun
    }
}

extension Health {
    init(wire health: Receipts__V1__Health) {
        self.init(
            state: String(wire: health.state),
            workerIndex: Int(health.worker_index),
            workerCount: Int(health.worker_count),
            uptimeMilliseconds: health.uptime_ms,
            publisherRun: health.epoch
        )
    }

    /// The answer as a C message; worker numbers are clamped into `uint32`.
    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__Health> {
        let health = arena.message(receipts__v1__health__init)
        health.pointee.state = arena.cString(state)
        health.pointee.worker_index = UInt32(clamping: workerIndex)
        health.pointee.worker_count = UInt32(clamping: workerCount)
        health.pointee.uptime_ms = uptimeMilliseconds
        health.pointee.epoch = publisherRun
        return health
    }
}
