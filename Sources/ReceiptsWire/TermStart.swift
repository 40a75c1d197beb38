import CReceiptsProto

/// One term of an ordinal's history on the replication wire (`receipts.v1.TermStart`): the
/// primary `member` wrote a termStarted record at `start`.
public struct TermStart: Hashable, Sendable {
    /// The term.
    public var term: UInt64
    /// The log position of its termStarted record.
    public var start: UInt64
    /// The member that was primary in it.
    public var member: String

    /// Creates a term's start.
    /// - Parameters:
    ///   - term: The term.
    ///   - start: The log position of its termStarted record.
    ///   - member: The member that was primary in it.
    public init(term: UInt64, start: UInt64, member: String) {
        self.term = term
        self.start = start
        self.member = member
    }
}

extension TermStart {
    /// The terms of a repeated field, their member names validated by `strings`.
    static func terms(
        wire pointers: UnsafeMutablePointer<UnsafeMutablePointer<Receipts__V1__TermStart>?>?,
        count: Int,
        strings: RequestStrings
    ) throws(WireError) -> [TermStart] {
        try [TermStart](wire: pointers, count: count) { (m) throws(WireError) in
            TermStart(term: m.term, start: m.start, member: try strings.string(m.member, "terms.member"))
        }
    }

    /// The terms as a repeated field.
    static func build(
        _ terms: [TermStart],
        in arena: inout Arena
    ) -> (count: Int, pointers: UnsafeMutablePointer<UnsafeMutablePointer<Receipts__V1__TermStart>?>?) {
        arena.messages(terms) { term, arena in
            let m = arena.message(receipts__v1__term_start__init)
            m.pointee.term = term.term
            m.pointee.start = term.start
            m.pointee.member = arena.cString(term.member)
            return m
        }
    }
}
