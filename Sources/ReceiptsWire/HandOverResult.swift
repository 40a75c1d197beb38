import CReceiptsProto

/// A switchover that took place: the answer to `Query.demote` (`receipts.v1.HandOverResult`,
/// deploy/REPLICATION.md section 12.2).
public struct HandOverResult: Hashable, Sendable {
    /// The member that was primary.
    public var from: String
    /// The standby it handed the ordinal over to, which campaigns at once.
    public var to: String
    /// The term that ended.
    public var term: UInt64

    /// Creates the account of a hand-over.
    /// - Parameters:
    ///   - from: The member that was primary.
    ///   - to: The standby it handed the ordinal over to.
    ///   - term: The term that ended.
    public init(from: String, to: String, term: UInt64) {
        self.from = from
        self.to = to
        self.term = term
    }
}

extension HandOverResult {
    init(wire m: Receipts__V1__HandOverResult?) {
        self.init(from: String(wire: m?.from), to: String(wire: m?.to), term: m?.term ?? 0)
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__HandOverResult> {
        let m = arena.message(receipts__v1__hand_over_result__init)
        m.pointee.from = arena.cString(from)
        m.pointee.to = arena.cString(to)
        m.pointee.term = term
        return m
    }
}
