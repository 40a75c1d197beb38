import ReceiptsWire

extension StandbyReplica {
    /// Whether a follower read may be served now.
    enum ReadFreshness: Equatable {
        /// Served, by this member, this fresh.
        case fresh(ServedBy)
        /// Refused `UNAVAILABLE`, for this reason.
        case refused(ErrorReply)
    }

    /// Whether the engine may answer a follower read now (deploy/REPLICATION.md, section 10),
    /// and if so how fresh the answer is.
    ///
    /// A read is refused while this member has heard from no primary within
    /// ``ReplicationSettings/standbyMaxStalenessMilliseconds`` (or never since it started), and
    /// while it has applied more than the primary's acknowledged position as last heard: right
    /// after a start or a cut its engine is its whole log, which may hold records a failover
    /// could cut, until the primary's position catches up with it.
    ///
    /// - Parameters:
    ///   - term: The term the member follows, for the answer's `served_by`.
    ///   - now: The monotonic time in milliseconds.
    /// - Returns: The member that serves the read, or the `UNAVAILABLE` refusal.
    func readFreshness(term: UInt64, now: Int64) -> ReadFreshness {
        let bound = settings.standbyMaxStalenessMilliseconds
        guard let heard = lastHeardFromPrimary, now - heard <= bound else {
            let silence = lastHeardFromPrimary.map { "for \(now - $0) ms" } ?? "since it started"
            return .refused(
                ErrorReply(
                    code: .unavailable,
                    message: "standby \(settings.member) has heard from no primary \(silence) (bound \(bound) ms)"
                )
            )
        }
        guard applied.offset <= follower.acknowledged else {
            return .refused(
                ErrorReply(
                    code: .unavailable,
                    message: "standby \(settings.member) holds records the primary has not acknowledged yet"
                )
            )
        }
        return .fresh(
            ServedBy(
                member: settings.member,
                role: .standby,
                term: term,
                applied: applied.offset,
                behindMilliseconds: UInt64(max(0, now - (caughtUpAt ?? now)))
            )
        )
    }
}
