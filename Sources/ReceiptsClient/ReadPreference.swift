import ReceiptsWire

/// Where a client's queries about conversations go in a replicated ordinal (deploy/REPLICATION.md
/// section 10).
public enum ReadPreference: Hashable, Sendable {
    /// Every query goes to the primary: answers hold everything acknowledged, including the
    /// caller's own writes.
    case primary
    /// Message status, who-read-it, last sent and unread counts go to a standby of the ordinal,
    /// which answers from the state it applied (only acknowledged state, behind the primary by
    /// about one round trip: not read-your-writes). A standby that is cut off from its primary
    /// past its staleness bound, or that is not a standby, or that stays silent for the
    /// acknowledgement timeout, is left for the primary for that query. Snapshots, health,
    /// stats, compaction and the move steps always go to the primary.
    case standbyPreferred
}

extension Query {
    /// Whether a standby may answer it for a client that prefers standbys: the reads of one
    /// member's state of conversations. A snapshot is not among them: its position in the
    /// update stream is the primary's publisher's, which a standby does not have.
    var isFollowerRead: Bool {
        switch self {
        case .messageStatus, .readDetail, .lastSent, .unreadCounts: true
        default: false
        }
    }
}
