import CReceiptsProto

/// A worker's placement, for the driver of a worker count change (`receipts.v1.Topology`).
public struct TopologyReport: Hashable, Sendable {
    /// The epoch of the last move prepared or committed; 0 before any.
    public var moveEpoch: UInt64
    /// The worker's ordinal.
    public var workerIndex: Int
    /// How many workers own the conversations now.
    public var workerCount: Int
    /// The count a prepared move goes to; nil when no move is under way.
    public var targetCount: Int?
    /// On a receiver: the senders whose conversations have all arrived.
    public var completedSenders: [Int]
    /// Conversations held and served.
    public var owned: Int
    /// Conversations frozen for their export.
    public var frozen: Int
    /// Conversations given to their new owner (kept until the commit).
    public var released: Int
    /// Conversations served here that came from another worker.
    public var imported: Int

    /// Creates a report.
    public init(
        moveEpoch: UInt64,
        workerIndex: Int,
        workerCount: Int,
        targetCount: Int?,
        completedSenders: [Int],
        owned: Int,
        frozen: Int,
        released: Int,
        imported: Int
    ) {
        self.moveEpoch = moveEpoch
        self.workerIndex = workerIndex
        self.workerCount = workerCount
        self.targetCount = targetCount
        self.completedSenders = completedSenders
        self.owned = owned
        self.frozen = frozen
        self.released = released
        self.imported = imported
    }
}

extension TopologyReport {
    init(wire m: Receipts__V1__Topology?) {
        let completed: [Int] =
            if let m, let values = m.completed_senders {
                UnsafeBufferPointer(start: values, count: m.n_completed_senders).map(Int.init)
            } else { [] }
        self.init(
            moveEpoch: m?.epoch ?? 0,
            workerIndex: Int(m?.worker_index ?? 0),
            workerCount: Int(m?.worker_count ?? 0),
            targetCount: (m?.target_count ?? 0) == 0 ? nil : Int(m?.target_count ?? 0),
            completedSenders: completed,
            owned: Int(m?.owned ?? 0),
            frozen: Int(m?.frozen ?? 0),
            released: Int(m?.released ?? 0),
            imported: Int(m?.imported ?? 0)
        )
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__Topology> {
        let m = arena.message(receipts__v1__topology__init)
        m.pointee.epoch = moveEpoch
        m.pointee.worker_index = UInt32(clamping: workerIndex)
        m.pointee.worker_count = UInt32(clamping: workerCount)
        m.pointee.target_count = UInt32(clamping: targetCount ?? 0)
        if !completedSenders.isEmpty {
            let values = arena.make(UInt32.self, count: completedSenders.count)
            for (i, sender) in completedSenders.enumerated() { (values + i).initialize(to: UInt32(clamping: sender)) }
            m.pointee.n_completed_senders = completedSenders.count
            m.pointee.completed_senders = values
        }
        m.pointee.owned = UInt64(clamping: owned)
        m.pointee.frozen = UInt64(clamping: frozen)
        m.pointee.released = UInt64(clamping: released)
        m.pointee.imported = UInt64(clamping: imported)
        return m
    }
}
