/// What the members of one ordinal agree on through a coordination service (deploy/REPLICATION.md,
/// sections 3 and 6): who is primary, in which term, and which standbys are in sync, under a lease
/// that expires on the service's clock when its holder stops renewing it.
///
/// One coordinator serves one member of one ordinal. `EtcdCoordinator` (`ReceiptsCoordination`)
/// talks to etcd; `InMemoryCoordinator` (`ReceiptsTestKit`, not shipped in the daemon) is the
/// same semantics in one process, for the in-process tests. The same conformance tests run
/// against both.
public protocol Coordinator: Sendable {
    /// Grants this member's lease (revoking a lease a previous run of this member left, if the
    /// implementation keeps one) and keeps it alive until `close()`. Call once, first.
    ///
    /// - Throws: `CoordinationError` when the service cannot be reached.
    func start() async throws(CoordinationError)

    /// The ordinal's keys as they are now.
    ///
    /// - Throws: `CoordinationError` when the service cannot be reached.
    func state() async throws(CoordinationError) -> OrdinalState

    /// Takes the primary key for `primary` (with this member's lease), sets the term to
    /// `primary.term`, and records `inSync`, in one transaction that succeeds only if no primary
    /// key exists and the term and in-sync keys are unchanged since `state` was read (section 6.2).
    ///
    /// - Returns: `.won` with the primary key's create revision (the guard for later writes), or
    ///   `.lost` with the state that made it fail.
    /// - Throws: `CoordinationError` when the service cannot be reached (the outcome is unknown:
    ///   read the state again).
    func campaign(
        _ primary: PrimaryRecord,
        inSync: InSyncRecord,
        over state: OrdinalState
    ) async throws(CoordinationError) -> CampaignOutcome

    /// Records the in-sync set, only while this member's primary key is the one created at
    /// `guardRevision` (section 5.3).
    ///
    /// - Returns: Whether it was written (false: this member is no longer primary).
    /// - Throws: `CoordinationError` when the service cannot be reached.
    func recordInSync(_ record: InSyncRecord, guardRevision: Int64) async throws(CoordinationError) -> Bool

    /// Deletes the primary key, only while it is the one created at `guardRevision`: a clean
    /// hand-over, without waiting for the lease to expire.
    ///
    /// - Throws: `CoordinationError` when the service cannot be reached.
    func resign(guardRevision: Int64) async throws(CoordinationError)

    /// Ends this member's term by handing the ordinal over (a switchover, section 12.2): writes
    /// the `handover` key and deletes the primary key, in one transaction, only while the
    /// primary key is the one created at `guardRevision`. The member `record.to` campaigns at
    /// once; the others wait (`HandOverRecord.quietPeriod`).
    ///
    /// - Returns: Whether it was written (false: this member is no longer primary).
    /// - Throws: `CoordinationError` when the service cannot be reached (the outcome is unknown:
    ///   read the state again).
    func handOver(_ record: HandOverRecord, guardRevision: Int64) async throws(CoordinationError) -> Bool

    /// Deposes a silent primary on its behalf (a takeover, section 6.5): writes the `handover`
    /// key `record` (naming this member) and deletes the primary key, in one transaction that
    /// succeeds only if the primary key is the one `state` shows and the term and in-sync keys
    /// are unchanged since `state` was read (so the in-sync record that made this member
    /// eligible still stands).
    ///
    /// - Returns: Whether it was written.
    /// - Throws: `CoordinationError` when the service cannot be reached (the outcome is unknown:
    ///   read the state again).
    func takeOver(_ record: HandOverRecord, over state: OrdinalState) async throws(CoordinationError) -> Bool

    /// The ordinal's state after every change to its keys (a lease's expiry deleting the primary
    /// key included), starting with the state as it is when the stream starts. The stream ends
    /// when `close()` is called; it throws when the service cannot be reached for long enough
    /// that the caller should read the state again.
    func changes() -> AsyncThrowingStream<OrdinalState, any Error>

    /// Until when (monotonic nanoseconds, `CLOCK_MONOTONIC`) this member's lease is certainly
    /// still alive on the service: the send time of the last renewal that succeeded, plus the
    /// TTL, minus a margin for clock rates (section 7.3). 0 before the first grant. Safe from
    /// any thread.
    var leaseDeadline: UInt64 { get }

    /// The id of this member's current lease; 0 while it has none. A lease that ended is never
    /// this member's again: a new grant has a new id, and the keys of the old one are gone with
    /// it. Safe from any thread.
    var lease: Int64 { get }

    /// Stops renewing and revokes the lease (the primary key, if this member holds it, goes
    /// with it), and ends the `changes()` streams.
    func close() async
}

/// The ordinal's `primary` key: who the primary is, in which term, and where to reach it.
public struct PrimaryRecord: Codable, Sendable, Equatable {
    /// The primary's member name.
    public var member: String
    /// The term it is primary of.
    public var term: UInt64
    /// Its replication endpoint, which standbys connect to.
    public var replication: String
    /// Its client endpoints, for `NOT_PRIMARY` answers and clients.
    public var ingest: String
    public var query: String
    public var publish: String

    /// A record for `member`, primary of `term`.
    public init(member: String, term: UInt64, replication: String, ingest: String, query: String, publish: String) {
        self.member = member
        self.term = term
        self.replication = replication
        self.ingest = ingest
        self.query = query
        self.publish = publish
    }
}

/// The ordinal's `in-sync` key: the standbys that hold everything the primary of `term`
/// acknowledged, and so may be promoted (section 5.3).
public struct InSyncRecord: Codable, Sendable, Equatable {
    public var term: UInt64
    public var standbys: [String]
    /// The acknowledgement mode the set was kept under (`standby` or `local`).
    public var ack: String

    public init(term: UInt64, standbys: [String], ack: String) {
        self.term = term
        self.standbys = standbys
        self.ack = ack
    }
}

/// The ordinal's `handover` key: the primary of `term` handed the ordinal over to `to`
/// (section 12.2). It names the member that campaigns first; once a later term exists it means
/// nothing, and it is left in place (the next hand-over overwrites it).
public struct HandOverRecord: Codable, Sendable, Equatable {
    /// How long a member other than `to` waits before it campaigns after a hand-over, so that
    /// the named standby (which has the whole log) wins, and the old primary (which wrote the
    /// latest term, so is eligible too) does not campaign first.
    public static let quietPeriod = Duration.seconds(2)

    /// How long a primary handing over may keep ingest paused waiting for its standbys to
    /// confirm they hold its whole log; past it, ingest is taken again and the hand-over refused.
    package static let confirmationLimitMilliseconds: Int64 = 5000

    /// The term that the hand-over ended.
    public var term: UInt64
    /// The member that campaigns at once.
    public var to: String

    public init(term: UInt64, to: String) {
        self.term = term
        self.to = to
    }
}

/// An ordinal's keys, with the revisions a campaign compares.
public struct OrdinalState: Sendable, Equatable {
    /// The primary key's value, or nil when there is none (no primary, or its lease expired).
    public var primary: PrimaryRecord?
    /// The primary key's create revision; 0 when there is none.
    public var primaryRevision: Int64
    /// The term key's value; 0 for a new ordinal.
    public var term: UInt64
    /// The term key's mod revision; 0 when there is none.
    public var termRevision: Int64
    /// The in-sync key's value, or nil.
    public var inSync: InSyncRecord?
    /// The in-sync key's mod revision; 0 when there is none.
    public var inSyncRevision: Int64
    /// The handover key's value, or nil when no primary ever handed the ordinal over.
    public var handOver: HandOverRecord?
    /// The store's revision when this state was read.
    public var revision: Int64

    public init(
        primary: PrimaryRecord? = nil,
        primaryRevision: Int64 = 0,
        term: UInt64 = 0,
        termRevision: Int64 = 0,
        inSync: InSyncRecord? = nil,
        inSyncRevision: Int64 = 0,
        handOver: HandOverRecord? = nil,
        revision: Int64 = 0
    ) {
        self.handOver = handOver
        self.primary = primary
        self.primaryRevision = primaryRevision
        self.term = term
        self.termRevision = termRevision
        self.inSync = inSync
        self.inSyncRevision = inSyncRevision
        self.revision = revision
    }
}

/// How a campaign ended.
public enum CampaignOutcome: Sendable, Equatable {
    /// This member is primary; later writes are guarded by the primary key's create revision.
    case won(guardRevision: Int64)
    /// Another member is primary, or the keys changed since they were read: the state now.
    case lost(OrdinalState)
}

/// The coordination service could not be reached, or answered something unexpected.
public struct CoordinationError: Error, CustomStringConvertible {
    /// What kind of failure it is, for the code that decides what to do next (never the message).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Kind: String, Sendable {
            case unavailable, leaseNotFound, noLease, refused, malformed, invalidUse
        }
        private let kind: Kind

        /// No answer: the service, or the way to it, is down or too slow.
        public static let unavailable = Code(kind: .unavailable)
        /// The lease a call names is gone: it expired or was revoked on the service.
        public static let leaseNotFound = Code(kind: .leaseNotFound)
        /// This member holds no lease to make the call with.
        public static let noLease = Code(kind: .noLease)
        /// The service answered with an error of another kind.
        public static let refused = Code(kind: .refused)
        /// An answer, or a stored record, that cannot be read.
        public static let malformed = Code(kind: .malformed)
        /// A setting or a call this coordinator cannot take (a bad endpoint, started twice).
        public static let invalidUse = Code(kind: .invalidUse)

        public var description: String { kind.rawValue }
    }

    /// What kind of failure it is.
    public var code: Code
    /// What failed, for an operator.
    public var message: String
    /// The underlying error.
    public var cause: (any Error)?

    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String {
        cause.map { "\(message) (cause: \($0))" } ?? message
    }
}
