/// The terms of a log: one entry per change of primary, the term and the position where its
/// `termStarted` record starts, oldest first (deploy/REPLICATION.md, section 7.1), as
/// PostgreSQL's timeline history files and Kafka's leader-epoch checkpoint keep them.
///
/// Every history starts with term 0 at position 0, held by no member: a log written before
/// replication, or a new member's empty log. Terms grow strictly and starts never go back, so
/// each entry's records run from its start to the next entry's start (or the log's end).
///
/// A pure value: recovery builds it from the `terms` file and the log (`TermsFile`), and two
/// members compare theirs to find where their logs part (`divergence(end:with:otherEnd:)`).
package struct TermHistory: Hashable, Sendable, CustomStringConvertible {
    /// One term: `member` became primary of `term`, and its `termStarted` record starts at `start`.
    package struct Entry: Hashable, Sendable {
        /// The term.
        package var term: UInt64
        /// The log position where the term's first record (its `termStarted`) starts.
        package var start: UInt64
        /// The primary's member name; empty for term 0 only.
        package var member: String

        /// An entry; checked when it joins a history.
        package init(term: UInt64, start: UInt64, member: String) {
            self.term = term
            self.start = start
            self.member = member
        }
    }

    /// Why entries cannot form a history.
    package struct Invalid: Error, CustomStringConvertible {
        package var description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// The longest member name: a DNS name's (member names are pod names), well inside the u16
    /// a term record counts it with.
    package static let maxMemberBytes = 253

    /// The entries, oldest first; the first is always term 0 at 0.
    package private(set) var entries: [Entry]

    /// The history of a log that never changed primary: term 0 at 0.
    package init() {
        entries = [Entry(term: 0, start: 0, member: "")]
    }

    /// A history of `entries`, oldest first, starting with term 0 at 0.
    ///
    /// - Throws: `Invalid` when the first entry is not term 0 at 0, or an entry is not allowed
    ///   after the one before it (see `append(_:)`).
    package init(entries: [Entry]) throws(Invalid) {
        self.init()
        guard let first = entries.first, first == self.entries[0] else {
            let found = entries.first.map(Self.text) ?? "nothing"
            throw Invalid(description: "a history starts with term 0 at 0, not \(found)")
        }
        for entry in entries.dropFirst() { try append(entry) }
    }

    /// The newest entry.
    package var last: Entry { entries[entries.count - 1] }

    /// Adds the newest term.
    ///
    /// - Throws: `Invalid` when the term does not grow, the start goes back, or the member name
    ///   is empty, longer than `maxMemberBytes`, or holds whitespace or a control character (the
    ///   `terms` file separates fields with spaces and entries with newlines).
    package mutating func append(_ entry: Entry) throws(Invalid) {
        guard entry.term > last.term else {
            throw Invalid(description: "term \(entry.term) cannot follow term \(last.term)")
        }
        guard entry.start >= last.start else {
            throw Invalid(
                description: "term \(entry.term) at \(entry.start) starts before term \(last.term)'s \(last.start)"
            )
        }
        guard Self.isValid(member: entry.member) else {
            throw Invalid(description: "term \(entry.term) names an invalid member \"\(entry.member)\"")
        }
        entries.append(entry)
    }

    /// Whether `member` is 1 to `maxMemberBytes` bytes without whitespace or control characters.
    package static func isValid(member: String) -> Bool {
        let isSeparator = { (scalar: Unicode.Scalar) in
            scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
        }
        return !member.isEmpty && member.utf8.count <= maxMemberBytes
            && !member.unicodeScalars.contains(where: isSeparator)
    }

    /// The history as it was before `position`: term 0 and every entry that starts before it.
    ///
    /// Recovery keeps this much of the `terms` file when it replays the log from a snapshot at
    /// `position`, and takes the rest from the records it replays.
    package func prefix(before position: UInt64) -> TermHistory {
        var history = TermHistory()
        history.entries += entries.dropFirst().prefix { $0.start < position }
        return history
    }

    /// Where this log (ending at `end`) and another (`other`, ending at `otherEnd`) part: both
    /// hold the same records up to the returned position (deploy/REPLICATION.md, section 7.2).
    ///
    /// With `t` the newest term both histories hold with the same start, the logs agree up to the
    /// nearer of the two ends of `t` (the next term's start, or the log's end when `t` is the
    /// last): every copy of term `t`'s records comes from `t`'s primary, byte for byte, at the
    /// same positions, and both ends are record boundaries. A member whose log runs past the
    /// result cuts it back there; a member whose `last` term is newer than the other's knows
    /// that the other is a stale primary, whatever this returns.
    ///
    /// - Returns: The position both logs hold identically up to; never past either end.
    package func divergence(end: UInt64, with other: TermHistory, otherEnd: UInt64) -> UInt64 {
        // Term 0 at 0 is in every history, so there is always a common term.
        let index = entries.lastIndex { entry in
            other.entries.contains { $0.term == entry.term && $0.start == entry.start }
        }!
        let otherIndex = other.entries.lastIndex { $0.term == entries[index].term }!
        return min(
            Self.end(of: index, in: entries, logEnd: end),
            Self.end(of: otherIndex, in: other.entries, logEnd: otherEnd),
            end,
            otherEnd
        )
    }

    /// Where the records of `entries[index]`'s term end: the next term's start, or the log's end.
    private static func end(of index: Int, in entries: [Entry], logEnd: UInt64) -> UInt64 {
        index + 1 < entries.count ? entries[index + 1].start : logEnd
    }

    private static func text(_ entry: Entry) -> String {
        "(\(entry.term), \(entry.start)\(entry.member.isEmpty ? "" : ", \(entry.member)"))"
    }

    /// "(0, 0) (1, 0, receiptd-0) (2, 900, receiptd-b-0)", as the design writes histories.
    package var description: String {
        entries.map(Self.text).joined(separator: " ")
    }
}
