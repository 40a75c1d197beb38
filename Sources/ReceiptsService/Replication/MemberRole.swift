/// The role a replicated member is in (deploy/REPLICATION.md, section 2), as `/readyz`,
/// `Health` and `receiptctl replication status` report it.
public enum MemberRole: String, Sendable, CaseIterable {
    /// No primary to follow, and not eligible (or waiting out a hand-over to another member).
    case waiting
    /// Campaigning for the next term.
    case candidate
    /// Following the primary named in the coordination service.
    case standby
    /// Serving the ordinal.
    case primary

    /// Whether the member serves its part: a primary takes writes, a standby follows one (and
    /// answers `NOT_PRIMARY` naming it); a waiting member or a candidate has nothing to offer yet.
    public var isServing: Bool {
        self == .primary || self == .standby
    }
}
