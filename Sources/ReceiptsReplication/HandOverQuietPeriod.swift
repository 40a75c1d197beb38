/// How long a member waits before it campaigns after a primary handed the ordinal over to
/// another member (deploy/REPLICATION.md, section 6.1): `HandOverRecord.quietPeriod` from when
/// it first saw the `handover` key of the current term naming someone else. The member named
/// campaigns at once, and a `handover` key of an earlier term means nothing.
///
/// Counted on this member's monotonic clock: the key carries no time, and only the member
/// named needs to be first, which a wait of seconds against a campaign of milliseconds gives.
package struct HandOverQuietPeriod {
    /// The record waited on, and when it was first seen (monotonic milliseconds).
    private var seen: (record: HandOverRecord, at: Int64)?

    /// A period that has seen no `handover` key yet.
    package init() {}

    /// Milliseconds still to wait before `member` may campaign, or nil when it need not wait.
    ///
    /// - Parameters:
    ///   - record: The ordinal's `handover` key.
    ///   - term: The ordinal's latest term.
    ///   - now: Monotonic milliseconds.
    package mutating func remaining(
        after record: HandOverRecord?,
        term: UInt64,
        member: String,
        now: Int64
    ) -> Int64? {
        guard let record, record.term == term, record.to != member else {
            seen = nil
            return nil
        }
        if seen?.record != record { seen = (record, now) }
        let quiet = Int64(HandOverRecord.quietPeriod / .milliseconds(1))
        let waited = now - (seen?.at ?? now)
        return waited < quiet ? quiet - waited : nil
    }
}
