import ReceiptsReplication
import ReceiptsWire

/// How a standby answers its clients, without the sockets (deploy/REPLICATION.md, sections 8.1
/// and 10): `StandbyLoop` hands it what arrives on the ingest and query endpoints.
///
/// - Ingest frames, and queries that do not set `allow_standby`, are answered `NOT_PRIMARY`
///   naming the primary followed, so a client or gateway that knows nothing of follower reads
///   always ends up at the primary.
/// - `health` is answered about this member, always.
/// - A query that sets `allow_standby` is a follower read: the engine's queries are answered
///   from the standby's engine (applied up to the primary's acknowledged position, never past
///   it) by the same `QueryHandler` as on a primary, with `served_by` naming this member;
///   `UNAVAILABLE` once no primary was heard from within the staleness bound
///   (``StandbyReplica/readFreshness(term:now:)``). `stats` is answered about this member.
///   The move steps, `topology` (the rebalance driver's view of an ordinal) and `compact` stay
///   `NOT_PRIMARY`.
/// - With CURVE configured `StandbyLoop` binds no client endpoint at all (it does not secure them
///   yet), so nothing reaches this.
///
/// A snapshot from a standby carries publisher run 0 and sequence 0: a standby publishes
/// nothing, so no update stream continues it.
struct StandbyQueries {
    let configuration: ServiceConfiguration
    let settings: ReplicationSettings
    /// The primary followed, as `NOT_PRIMARY` names it; nil when only its replication endpoint
    /// is known (a fixed role).
    let primary: PrimaryRecord?
    /// When the member started (monotonic milliseconds), for `health`.
    let startedMonotonic: Int64

    /// The term the member follows: the primary's, else the highest its log or a session showed.
    func term(of replica: StandbyReplica) -> UInt64 {
        primary?.term ?? replica.follower.knownTerm
    }

    /// The `NOT_PRIMARY` refusal naming the primary followed.
    func notPrimary(_ replica: StandbyReplica) -> ErrorReply {
        ErrorReply(
            code: .notPrimary,
            message: "this member is a standby" + (primary.map { "; the primary is \($0.member)" } ?? ""),
            primary: primary.map {
                ErrorReply.Primary(member: $0.member, ingest: $0.ingest, query: $0.query, publish: $0.publish)
            },
            term: term(of: replica)
        )
    }

    /// The reply frame to a query message's body (the frames after its envelope).
    ///
    /// - Parameters:
    ///   - body: The frames after the envelope: one `Query` frame is expected; anything else is
    ///     answered `NOT_PRIMARY`, and the primary says what is wrong with it.
    ///   - replica: The standby's log and engine.
    ///   - now: The monotonic time in milliseconds.
    /// - Returns: The encoded `QueryReply`.
    func reply(to body: ArraySlice<UnsafeRawBufferPointer>, replica: StandbyReplica, now: Int64) -> [UInt8] {
        guard body.count == 1, let frame = body.first,
            let (query, allowStandby) = try? Query.decodeAllowingStandby(frame)
        else {
            return QueryReply.error(notPrimary(replica)).encode()
        }
        if query == .health { return QueryReply.health(health(replica, now: now)).encode() }
        guard allowStandby else { return QueryReply.error(notPrimary(replica)).encode() }
        if query == .stats {
            replica.counters.increment(.queriesServed, label: query.kindName)
            return QueryReply.stats(replica.counters.snapshot()).encode()
        }
        if let refusal = configuration.gatewayLimits.check(query) {
            return QueryReply.error(refusal.errorReply).encode()
        }
        let served: ServedBy
        switch replica.readFreshness(term: term(of: replica), now: now) {
        case .fresh(let servedBy):
            served = servedBy
        case .refused(let error):
            return QueryReply.error(error).encode()
        }
        guard
            let answer = QueryHandler(engine: replica.engine).answer(
                query,
                publisherRun: 0,
                publishedSequence: { _ in 0 },
                userTopicRun: 0,
                publishedUserSequence: { _ in 0 }
            )
        else {
            return QueryReply.error(notPrimary(replica)).encode()
        }
        replica.counters.increment(.queriesServed, label: query.kindName)
        return answer.encode(servedBy: served)
    }

    /// The standby's health: its role, the term it follows, and how far it applied.
    func health(_ replica: StandbyReplica, now: Int64) -> Health {
        Health(
            state: "standby",
            workerIndex: configuration.workerIndex,
            workerCount: replica.engine.topology.workerCount,
            uptimeMilliseconds: UInt64(max(0, now - startedMonotonic)),
            publisherRun: 0,
            role: .standby,
            term: term(of: replica),
            member: settings.member,
            applied: replica.applied.offset
        )
    }
}
