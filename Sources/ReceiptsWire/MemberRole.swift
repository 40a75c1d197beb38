/// The role a replicated member is in (deploy/REPLICATION.md, section 2): what `Health`, a
/// standby's `ServedBy`, `/readyz` and `receiptd_replication_role` report. On the wire it is its
/// raw value, a string.
public enum MemberRole: String, Sendable, CaseIterable {
    /// No primary to follow, and not eligible (or waiting out a hand-over to another member).
    case waiting
    /// Campaigning for the next term.
    case candidate
    /// Following the primary named in the coordination service.
    case standby
    /// Serving the ordinal.
    case primary
    /// Primary of a term whose lease was not renewed in time: it acknowledges nothing further and
    /// answers ingest `NOT_PRIMARY` until the keys say what comes next (section 7.3).
    case deposed

    /// Whether the member serves its part: a primary takes writes, a standby follows one (and
    /// answers `NOT_PRIMARY` naming it); a waiting member, a candidate or a deposed primary has
    /// nothing to offer.
    public var isServing: Bool {
        self == .primary || self == .standby
    }
}
