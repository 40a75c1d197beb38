import Logging
import ReceiptsReplication
import Synchronization

/// A member of a replicated ordinal whose role its coordinator decides (deploy/REPLICATION.md,
/// sections 2 and 6): it follows the primary named there (a `StandbyLoop`), campaigns when no
/// primary is named and it is eligible, serves as primary when it wins (a `ServiceLoop` that
/// starts the new term in the log), and becomes a standby again when it is deposed, cutting its
/// log back to the new primary's history as it follows.
///
/// A primary hands the ordinal over on a `demote` query or a stop (`HandOver`); after a
/// hand-over the members other than the one named wait `HandOverRecord.quietPeriod` before
/// they campaign (`HandOverQuietPeriod`), so that the named standby, which has the whole log,
/// takes the next term at once.
///
/// Runs on the worker's thread. A task watches the ordinal's keys and asks the running loop to
/// end (`ServiceControl.requestLeave`) when they no longer match its role; every change of role
/// closes the log and opens it again, so each role starts from what recovery builds. What to do
/// next, and whether keys match the role, is decided by `MemberMachine`, a value with no I/O.
final class ReplicatedMember: Sendable {
    private let configuration: ServiceConfiguration
    private let settings: ReplicationSettings
    private let coordinator: any Coordinator
    private let logger: Logger
    private let control: ServiceControl
    private let machine: Mutex<MemberMachine>
    private let metrics: ReplicationMetrics
    /// The ordinal's keys as last seen by the watcher.
    private let latest = Mutex<OrdinalState?>(nil)

    init(
        configuration: ServiceConfiguration,
        settings: ReplicationSettings,
        coordinator: any Coordinator,
        logger: Logger,
        control: ServiceControl,
        metrics: ReplicationMetrics
    ) {
        self.metrics = metrics
        self.configuration = configuration
        self.settings = settings
        self.coordinator = coordinator
        self.logger = logger
        self.control = control
        machine = Mutex(
            MemberMachine(
                member: PrimaryRecord(
                    member: settings.member,
                    term: 0,
                    replication: settings.endpoint,
                    ingest: configuration.ingestEndpoint,
                    query: configuration.queryEndpoint,
                    publish: configuration.publishEndpoint
                ),
                mayStartOrdinal: settings.mayStartOrdinal,
                acknowledgement: settings.acknowledgement
            )
        )
    }

    /// Takes roles until `stop()`; the first role ready calls `onReady`.
    func run(onReady: () -> Void) throws(ServiceError) {
        let coordinator = self.coordinator
        do {
            try Blocking.run { () async throws(CoordinationError) in try await coordinator.start() }
        } catch {
            throw ServiceError(.transport, "cannot reach the coordination service", cause: error)
        }
        let watcher = Task { await watch() }
        defer {
            watcher.cancel()
            Blocking.run { await coordinator.close() }
        }
        var quietPeriod = HandOverQuietPeriod()
        var ready = false
        func readyOnce() {
            if !ready {
                ready = true
                onReady()
            }
        }
        while !control.isStopRequested {
            let state: OrdinalState
            if let seen = latest.withLock({ $0 }) {
                state = seen
            } else {
                do {
                    state = try Blocking.run { () async throws(CoordinationError) in try await coordinator.state() }
                } catch {
                    logger.warning("cannot read the ordinal's keys; trying again", metadata: ["error": "\(error)"])
                    control.waitForWake(milliseconds: 500)
                    continue
                }
            }
            // Read only while no primary is named: the quiet period starts when it is first seen so.
            let unnamed = state.primary == nil
            let ownLastTerm =
                unnamed ? ((try? TermsFile.read(directory: configuration.dataDirectory)) ?? nil)?.last : nil
            let quiet =
                unnamed
                ? quietPeriod.remaining(
                    after: state.handOver,
                    term: state.term,
                    member: settings.member,
                    now: ServiceClock.monotonicMilliseconds()
                ) : nil
            let action = machine.withLock {
                $0.next(
                    state: state,
                    ownLastTerm: ownLastTerm,
                    holdsLease: coordinator.lease != 0,
                    quietMilliseconds: quiet
                )
            }
            switch action {
            case .resign(let guardRevision):
                // A key this member holds from an earlier run or term: hand it back and start over.
                _ = try? Blocking.run { () async throws(CoordinationError) in
                    try await coordinator.resign(guardRevision: guardRevision)
                }
                latest.withLock { $0 = nil }
            case .follow(let primary):
                try follow(primary, onReady: readyOnce)
            case .stayWaiting(let milliseconds):
                setRole(.waiting)
                readyOnce()
                control.waitForWake(milliseconds: Int32(milliseconds))
            case .awaitLease(let milliseconds):
                // Without a lease no campaign can win: wait, quietly, for the coordinator's next grant.
                control.waitForWake(milliseconds: Int32(milliseconds))
            case .campaign(let record, let inSync):
                try campaign(record, inSync: inSync, over: state, onReady: readyOnce)
            }
        }
    }

    /// Follows `primary` until the keys name another (or none), or a stop.
    private func follow(_ primary: PrimaryRecord, onReady: () -> Void) throws(ServiceError) {
        setRole(.standby(primary))
        logger.info(
            "following",
            metadata: ["replication.primary": "\(primary.member)", "replication.term": "\(primary.term)"]
        )
        let loop = try StandbyLoop(
            configuration: configuration,
            settings: settings,
            primaryEndpoint: primary.replication,
            primary: primary,
            logger: logger,
            control: control,
            metrics: metrics
        )
        try loop.run(onReady: onReady)
    }

    /// Campaigns for `record`'s term over `state`; on winning, serves as primary until deposed
    /// or stopped.
    private func campaign(
        _ record: PrimaryRecord,
        inSync: InSyncRecord,
        over state: OrdinalState,
        onReady: () -> Void
    ) throws(ServiceError) {
        let term = record.term
        let coordinator = self.coordinator
        control.role = .candidate
        metrics.record(role: .candidate, term: state.term)
        // The lease the campaign attaches the primary key to: read before, so that a lease granted
        // meanwhile can only make the new primary stop acknowledging, never acknowledge on a key
        // that is gone.
        let lease = coordinator.lease
        let outcome: CampaignOutcome
        do {
            outcome = try Blocking.run { () async throws(CoordinationError) in
                try await coordinator.campaign(record, inSync: inSync, over: state)
            }
        } catch {
            logger.warning("the campaign's outcome is unknown; reading the keys again", metadata: ["error": "\(error)"])
            latest.withLock { $0 = nil }
            // Not at once: a member whose lease is gone (etcd back after a pause, say) fails
            // every campaign until the coordinator's next grant, and retried in a loop it
            // logged hundreds of these a second.
            control.waitForWake(milliseconds: Int32(MemberMachine.campaignRetryMilliseconds))
            return
        }
        switch outcome {
        case .lost(let now):
            logger.info(
                "another member is primary",
                metadata: ["replication.primary": "\(now.primary?.member ?? "none")"]
            )
            latest.withLock { $0 = now }
        case .won(let guardRevision):
            logger.notice("won the campaign; serving as primary", metadata: ["replication.term": "\(term)"])
            // The keys seen so far name no primary: the watcher brings the ones that name this member.
            latest.withLock { $0 = nil }
            setRole(.primary(term: term, guardRevision: guardRevision))
            metrics.record(role: .primary, term: term)
            let loop = try ServiceLoop(
                configuration: configuration,
                logger: logger,
                control: control,
                primaryTerm: PrimaryTerm(
                    term: term,
                    coordinator: coordinator,
                    guardRevision: guardRevision,
                    recorded: Set(inSync.standbys),
                    lease: lease
                ),
                replicationMetrics: metrics
            )
            metrics.promoted(reason: "lease")
            try loop.run(onReady: onReady)
            if let handedOver = loop.handedOver {
                logger.notice(
                    "handed over; following the new primary",
                    metadata: ["replication.handover.to": "\(handedOver.to)", "replication.term": "\(handedOver.term)"]
                )
            } else if control.isStopRequested {
                // A stop without a hand-over frees the ordinal at once instead of after the lease's TTL.
                _ = try? Blocking.run { () async throws(CoordinationError) in
                    try await coordinator.resign(guardRevision: guardRevision)
                }
            } else {
                let expired = LeaseDeadline.now() > coordinator.leaseDeadline
                metrics.deposed(reason: expired ? "lease_expired" : "superseded")
                logger.warning(
                    "deposed; following the new primary",
                    metadata: ["replication.lease_expired": "\(expired)"]
                )
            }
            latest.withLock { $0 = nil }
        }
    }

    /// Takes a new role: a leave asked for the old one is void; keys already seen that do not
    /// match the new one ask for the next change at once.
    private func setRole(_ new: MemberMachine.Role) {
        control.clearLeave()
        machine.withLock { $0.take(new) }
        switch new {
        case .waiting:
            control.role = .waiting
            metrics.record(role: .waiting, term: latest.withLock { $0?.term } ?? 0)
        case .standby(let primary):
            control.role = .standby
            metrics.record(role: .standby, term: primary.term)
        case .primary:
            control.role = .primary  // the metrics are recorded with the term won, by `campaign`
        }
        // Keys seen before the role changed may already call for the next change.
        if let state = latest.withLock({ $0 }), !matches(state) { control.requestLeave() }
    }

    /// Whether the keys agree with the role the member is in.
    private func matches(_ state: OrdinalState) -> Bool {
        machine.withLock { $0.matches(state) }
    }

    /// Follows the ordinal's keys: stores each state and asks the loop to leave when the role
    /// no longer matches it.
    private func watch() async {
        while !Task.isCancelled {
            do {
                for try await state in coordinator.changes() {
                    latest.withLock { $0 = state }
                    if !matches(state) { control.requestLeave() }
                }
                return
            } catch {
                logger.warning("watching the ordinal's keys failed; watching again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
