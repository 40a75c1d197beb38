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
    /// The member's replication role; nil for an unreplicated worker (and for a role this build
    /// does not know, from a newer server).
    public var role: MemberRole?
    /// The highest term of the ordinal the member knows; 0 until replication runs.
    public var term: UInt64
    /// The member's name; empty until replication runs.
    public var member: String
    /// The log position up to which the member's engine applied records; 0 until replication runs.
    public var applied: UInt64

    /// Creates a health answer.
    /// - Parameters:
    ///   - state: "serving" or "stopping".
    ///   - workerIndex: This worker's ordinal.
    ///   - workerCount: How many workers share the conversations.
    ///   - uptimeMilliseconds: Milliseconds since start.
    ///   - publisherRun: The publisher run.
    ///   - role: The member's replication role; nil for an unreplicated worker.
    ///   - term: The highest term the member knows.
    ///   - member: The member's name.
    ///   - applied: The log position its engine applied records up to.
    public init(
        state: String,
        workerIndex: Int,
        workerCount: Int,
        uptimeMilliseconds: UInt64,
        publisherRun: UInt64,
        role: MemberRole? = nil,
        term: UInt64 = 0,
        member: String = "",
        applied: UInt64 = 0
    ) {
        self.state = state
        self.workerIndex = workerIndex
        self.workerCount = workerCount
        self.uptimeMilliseconds = uptimeMilliseconds
        self.publisherRun = publisherRun
        self.role = role
        self.term = term
        self.member = member
        self.applied = applied
    }
}

extension Health {
    init(wire health: Receipts__V1__Health) {
        self.init(
            state: String(wire: health.state),
            workerIndex: Int(health.worker_index),
            workerCount: Int(health.worker_count),
            uptimeMilliseconds: health.uptime_ms,
            publisherRun: health.epoch,
            role: MemberRole(rawValue: String(wire: health.role)),
            term: health.term,
            member: String(wire: health.member),
            applied: health.applied
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
        health.pointee.role = arena.cString(role?.rawValue ?? "")
        health.pointee.term = term
        health.pointee.member = arena.cString(member)
        health.pointee.applied = applied
        return health
    }
}
