/// How a member of a replicated ordinal takes part in replication (deploy/REPLICATION.md,
/// sections 4 and 12.1).
///
/// A member's role is decided by the ordinal's coordinator (`.elected`, section 6): it follows the
/// primary named there, or campaigns when there is none. Fixed roles, without a coordinator,
/// serve the in-process tests and the shipping tests with two processes.
public struct ReplicationSettings: Sendable, Equatable {
    /// A member's part in its ordinal.
    public enum Role: Sendable, Equatable {
        /// Decided by the coordinator given to `ReceiptService`: standby, candidate or primary.
        case elected
        /// Takes events and ships its log, always.
        case primary
        /// Follows the primary whose replication endpoint is given.
        case standby(primaryEndpoint: String)
    }

    /// What an acknowledgement waits for (`--replication-ack`, section 5.1).
    public enum Acknowledgement: String, Sendable, Equatable {
        /// The primary's own durability; standbys follow asynchronously.
        case local
        /// Durable on the primary and on every standby of the in-sync set.
        case standby
    }

    /// What happens when no standby is in sync (`--replication-fallback`, section 5.3).
    public enum Fallback: String, Sendable, Equatable {
        /// The last standby stays in the set: acknowledgements wait for it, and after the timeout
        /// new ingest is refused `UNAVAILABLE`.
        case stall
        /// The set may empty: the primary acknowledges on its own durability, counted.
        case local
    }

    /// This member's name, unique in the cluster and stable across restarts (the pod name).
    public var member: String
    /// This member's role.
    public var role: Role
    /// The replication endpoint this member binds (a ROUTER that only the primary answers).
    public var endpoint: String
    /// Whether this member may take an ordinal's first term (it belongs to the first member set
    /// of `--members`, section 6.4).
    public var mayStartOrdinal = false
    /// What an acknowledgement waits for.
    public var acknowledgement = Acknowledgement.standby
    /// What happens when no standby is in sync.
    public var fallback = Fallback.stall
    /// How far past a standby's appended end the primary may send (credit by position).
    public var windowBytes: UInt64 = 16 << 20
    /// Each side sends something at least this often when idle.
    public var heartbeatMilliseconds: Int64 = 50
    /// A session silent this long is over.
    public var timeoutMilliseconds: Int64 = 1000
    /// A standby of the in-sync set that hears nothing from its primary this long takes over
    /// (`--replication-takeover-ms`, section 6.5), under `--replication-ack standby` only; 0
    /// leaves failover to the primary's lease expiring.
    public var takeoverMilliseconds: Int64 = 500
    /// A standby silent this long loses the pin that keeps its records from compaction.
    public var pinTimeoutMilliseconds: Int64 = 600_000
    /// A standby that has heard from no primary this long answers follower reads `UNAVAILABLE`
    /// (`--standby-max-staleness-ms`, section 10), so a cut-off standby never serves old state
    /// for long.
    public var standbyMaxStalenessMilliseconds: Int64 = 2000

    /// Settings for `member` in `role`, binding `endpoint`, with the default timings.
    public init(member: String, role: Role, endpoint: String) {
        self.member = member
        self.role = role
        self.endpoint = endpoint
    }
}
