import ReceiptsReplication
import Testing

/// Where two logs part, found from their term histories (deploy/REPLICATION.md, section 7.2),
/// and what a history accepts.
struct TermHistoryTests {
    /// A history from `(term, start)` pairs after term 0, member names made up.
    static func history(_ terms: [(UInt64, UInt64)]) throws -> TermHistory {
        try TermHistory(
            entries: [TermHistory.Entry(term: 0, start: 0, member: "")]
                + terms.map { TermHistory.Entry(term: $0.0, start: $0.1, member: "receiptd-\($0.0)") }
        )
    }

    /// One row of the design's table: the primary's terms after term 0 and its end, the
    /// standby's, and where they part.
    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var primary: [(UInt64, UInt64)]
        var primaryEnd: UInt64
        var standby: [(UInt64, UInt64)]
        var standbyEnd: UInt64
        var divergence: UInt64
        var testDescription: String { name }

        init(
            _ name: String,
            _ primary: [(UInt64, UInt64)],
            _ primaryEnd: UInt64,
            _ standby: [(UInt64, UInt64)],
            _ standbyEnd: UInt64,
            _ divergence: UInt64
        ) {
            (self.name, self.primary, self.primaryEnd) = (name, primary, primaryEnd)
            (self.standby, self.standbyEnd, self.divergence) = (standby, standbyEnd, divergence)
        }
    }

    static let rows: [Row] = [
        Row("equal histories and ends", [(1, 0), (2, 900)], 1500, [(1, 0), (2, 900)], 1500, 1500),
        Row("equal histories, the standby behind", [(1, 0), (2, 900)], 1500, [(1, 0), (2, 900)], 1000, 1000),
        Row("the standby's history a prefix", [(1, 0), (2, 900)], 1500, [(1, 0)], 900, 900),
        Row("the old primary, past its last term", [(1, 0), (2, 900)], 1500, [(1, 0)], 1200, 900),
        Row("diverging at a term", [(1, 0), (3, 700)], 800, [(1, 0), (2, 650)], 690, 650),
        Row("a new, empty member", [(1, 0)], 500, [], 0, 0),
        Row("both without terms", [], 300, [], 200, 200),
        Row("the standby knows a newer term", [(1, 0)], 500, [(1, 0), (2, 400)], 450, 400),
    ]

    @Test(arguments: rows)
    func theLogsAgreeUpToTheDivergence(_ row: Row) throws {
        let primary = try Self.history(row.primary)
        let standby = try Self.history(row.standby)
        #expect(primary.divergence(end: row.primaryEnd, with: standby, otherEnd: row.standbyEnd) == row.divergence)
        // Both sides find the same point.
        #expect(standby.divergence(end: row.standbyEnd, with: primary, otherEnd: row.primaryEnd) == row.divergence)
    }

    @Test func aStandbyWithANewerTermShowsThePrimaryIsStale() throws {
        let primary = try Self.history([(1, 0)])
        let standby = try Self.history([(1, 0), (2, 400)])
        #expect(standby.last.term > primary.last.term)
    }

    @Test func aTermWithAnotherStartIsNotShared() throws {
        // Term 2 at 650 on one side and at 700 on the other cannot be the same term's records:
        // the logs agree only up to term 1's nearer end.
        let one = try Self.history([(1, 0), (2, 650)])
        let other = try Self.history([(1, 0), (2, 700)])
        #expect(one.divergence(end: 800, with: other, otherEnd: 800) == 650)
    }

    @Test func aHistoryStartsWithTermZero() {
        #expect(TermHistory().entries == [TermHistory.Entry(term: 0, start: 0, member: "")])
        #expect(throws: TermHistory.Invalid.self) { try TermHistory(entries: []) }
        #expect(throws: TermHistory.Invalid.self) {
            try TermHistory(entries: [TermHistory.Entry(term: 1, start: 0, member: "receiptd-0")])
        }
    }

    @Test(arguments: [
        (TermHistory.Entry(term: 2, start: 900, member: "receiptd-0"), "term 2 cannot follow term 2"),
        (TermHistory.Entry(term: 1, start: 1000, member: "receiptd-0"), "term 1 cannot follow term 2"),
        (TermHistory.Entry(term: 3, start: 899, member: "receiptd-0"), "starts before term 2's 900"),
        (TermHistory.Entry(term: 3, start: 900, member: ""), "invalid member"),
        (TermHistory.Entry(term: 3, start: 900, member: "a b"), "invalid member"),
        (TermHistory.Entry(term: 3, start: 900, member: "a\nb"), "invalid member"),
        (TermHistory.Entry(term: 3, start: 900, member: String(repeating: "a", count: 254)), "invalid member"),
    ])
    func anEntryThatCannotFollowIsRefused(entry: TermHistory.Entry, reason: String) throws {
        var history = try Self.history([(1, 0), (2, 900)])
        let before = history
        do {
            try history.append(entry)
            Issue.record("appended \(entry)")
        } catch {
            #expect("\(error)".contains(reason), "\(error)")
        }
        #expect(history == before)
    }

    @Test func aPrefixKeepsTheTermsStartingBeforeThePosition() throws {
        let history = try Self.history([(1, 0), (2, 900), (3, 1500)])
        #expect(history.prefix(before: 0) == TermHistory())
        #expect(try history.prefix(before: 1) == Self.history([(1, 0)]))
        #expect(try history.prefix(before: 900) == Self.history([(1, 0)]))
        #expect(try history.prefix(before: 901) == Self.history([(1, 0), (2, 900)]))
        #expect(history.prefix(before: 5000) == history)
    }

    @Test func itReadsAsTheDesignWritesIt() throws {
        let history = try Self.history([(1, 0), (2, 900)])
        #expect("\(history)" == "(0, 0) (1, 0, receiptd-1) (2, 900, receiptd-2)")
    }
}
