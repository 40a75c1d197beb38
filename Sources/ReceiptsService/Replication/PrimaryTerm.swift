import ReceiptsReplication

/// A term this member won (deploy/REPLICATION.md, section 6.3): what its `ServiceLoop` needs to
/// serve as the elected primary: the term to start in the log, and the coordinator that guards
/// its writes and its lease.
struct PrimaryTerm: Sendable {
    /// The term won.
    var term: UInt64
    /// The coordinator the campaign went through.
    var coordinator: any Coordinator
    /// The primary key's create revision: the guard of every later write.
    var guardRevision: Int64
    /// The in-sync set recorded by the campaign.
    var recorded: Set<String>
    /// The lease the primary key was created with (read before the campaign): once the
    /// coordinator holds another, the key is gone with the old one, and this member acknowledges
    /// nothing more in this term, however its new lease's deadline moves.
    var lease: Int64
}
