import CReceiptsProto

/// The member that answered a query, when a standby did, and how fresh its answer is
/// (`receipts.v1.ServedBy`, deploy/REPLICATION.md section 10).
public struct ServedBy: Hashable, Sendable {
    /// The member's name.
    public var member: String
    /// Its role when it answered (a standby's, for follower reads); nil for a role this build
    /// does not know.
    public var role: MemberRole?
    /// The highest term it knew.
    public var term: UInt64
    /// The log position its engine had applied: the answer holds everything up to it.
    public var applied: UInt64
    /// Milliseconds since the applied position was the primary's acknowledged position.
    public var behindMilliseconds: UInt64

    /// Creates the answering member's account.
    /// - Parameters:
    ///   - member: The member's name.
    ///   - role: Its role when it answered.
    ///   - term: The highest term it knew.
    ///   - applied: The log position its engine had applied.
    ///   - behindMilliseconds: Milliseconds since that position was the primary's acknowledged one.
    public init(member: String, role: MemberRole?, term: UInt64, applied: UInt64, behindMilliseconds: UInt64) {
        self.member = member
        self.role = role
        self.term = term
        self.applied = applied
        self.behindMilliseconds = behindMilliseconds
    }
}

extension ServedBy {
    init(wire m: Receipts__V1__ServedBy) {
        self.init(
            member: String(wire: m.member),
            role: MemberRole(rawValue: String(wire: m.role)),
            term: m.term,
            applied: m.applied,
            behindMilliseconds: m.behind_ms
        )
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__ServedBy> {
        let m = arena.message(receipts__v1__served_by__init)
        m.pointee.member = arena.cString(member)
        m.pointee.role = arena.cString(role?.rawValue ?? "")
        m.pointee.term = term
        m.pointee.applied = applied
        m.pointee.behind_ms = behindMilliseconds
        return m
    }
}
