import Logging
import ReceiptsReplication
import ReceiptsWire
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
/// Runs on the worker's thread and decides nothing itself: `MemberMachine` says what to do next
/// and this carries it out (etcd calls, the standby and primary loops, waits) and feeds the
/// result back. A task watches the ordinal's keys and asks the running loop to end
/// (`ServiceControl.requestLeave`) when the machine finds its role no longer matches them; every
/// change of role closes the log and opens it again, so each role starts from what recovery
/// builds.
final class ReplicatedMember: Sendable {
    private let configuration: ServiceConfiguration
    private let settings: ReplicationSettings
    private let coordinator: any Coordinator
    private let logger: Logger
    private let control: ServiceControl
    private let machine: Mutex<MemberMachine>
    private let metrics: ReplicationMetrics
    /// The last failure to read the terms file, so that a lasting one is logged once.
    private let termsFileFailure = Mutex<String?>(nil)

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
        var ready = false
        func readyOnce() {
            if !ready {
                ready = true
                onReady()
            }
        }
        var input = MemberMachine.Input.started
        // Whether the next promotion follows this member's takeover, for its metric's reason.
        var tookOver = false
        var published: (role: MemberMachine.Role, term: UInt64)?
        while true {
            let facts = MemberMachine.Facts(
                ownLastTerm: ownLastTerm(),
                lease: coordinator.lease,
                stopping: control.isStopRequested,
                now: ServiceClock.monotonicMilliseconds()
            )
            let (effect, role, term, keysKnown) = machine.withLock { machine in
                (machine.step(input, facts), machine.role, machine.knownTerm, machine.keys != nil)
            }
            if published?.role != role || published?.term != term {
                published = (role, term)
                publish(role, knownTerm: term)
            }
            switch effect {
            case .readKeys:
                do {
                    input = .keys(
                        try Blocking.run { () async throws(CoordinationError) in try await coordinator.state() }
                    )
                } catch {
                    logger.warning("cannot read the ordinal's keys; trying again", metadata: ["error": "\(error)"])
                    input = .keysUnreadable
                }
            case .resign(let guardRevision):
                _ = try? Blocking.run { () async throws(CoordinationError) in
                    try await coordinator.resign(guardRevision: guardRevision)
                }
                input = .resigned
            case .wait(let milliseconds):
                // Waiting with the keys known and a lease is a role: not eligible, or a hand-over's
                // quiet period (not a wait for a lease, a read or a campaign to try again).
                if role == .waiting && keysKnown && facts.lease != 0 { readyOnce() }
                control.waitForWake(milliseconds: Int32(milliseconds))
                input = .waited
            case .takeOver(let record, let state):
                tookOver = takeOver(record, over: state)
                input = .tookOver
            case .campaign(let record, let inSync, let state):
                let outcome = campaign(record, inSync: inSync, over: state)
                if case .won = outcome {} else { tookOver = false }
                input = .campaignEnded(outcome)
            case .follow(let primary):
                tookOver = false
                input = .roleEnded(try follow(primary, onReady: readyOnce))
            case .serve(let term, let guardRevision, let lease, let recorded):
                input = .roleEnded(
                    try serve(
                        term: term,
                        guardRevision: guardRevision,
                        lease: lease,
                        recorded: recorded,
                        reason: tookOver ? "takeover" : "lease",
                        onReady: readyOnce
                    )
                )
                tookOver = false
            case .exit:
                return
            }
        }
    }

    /// The last entry of this member's `terms` file; a file that cannot be read counts as none
    /// (the member is then eligible only through the in-sync record), with a warning when the
    /// failure is new.
    private func ownLastTerm() -> TermHistory.Entry? {
        do {
            let last = try TermsFile.read(directory: configuration.dataDirectory)?.last
            termsFileFailure.withLock { $0 = nil }
            return last
        } catch {
            let description = "\(error)"
            let isNew = termsFileFailure.withLock { last in
                defer { last = description }
                return last != description
            }
            if isNew { logger.warning("cannot read the terms file", metadata: ["error": "\(description)"]) }
            return nil
        }
    }

    /// Campaigns with the keys; nil when the outcome is unknown.
    private func campaign(_ record: PrimaryRecord, inSync: InSyncRecord, over state: OrdinalState) -> CampaignOutcome? {
        let coordinator = self.coordinator
        do {
            let outcome = try Blocking.run { () async throws(CoordinationError) in
                try await coordinator.campaign(record, inSync: inSync, over: state)
            }
            if case .lost(let now) = outcome {
                logger.info(
                    "another member is primary",
                    metadata: ["replication.primary": "\(now.primary?.member ?? "none")"]
                )
            }
            return outcome
        } catch {
            logger.warning("the campaign's outcome is unknown; reading the keys again", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Follows `primary` until the keys name another (or none), or a stop.
    private func follow(_ primary: PrimaryRecord, onReady: () -> Void) throws(ServiceError) -> MemberMachine.RoleEnding
    {
        startRole()
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
        let silent = try loop.run(onReady: onReady, mayTakeOver: { machine.withLock { $0.mayTakeOverNow } })
        if control.isStopRequested { return .stopped }
        return silent ? .primarySilent : .left
    }

    /// Deposes the silent primary the keys `state` name by handing its term over to this member;
    /// whether it was written.
    private func takeOver(_ record: HandOverRecord, over state: OrdinalState) -> Bool {
        let coordinator = self.coordinator
        do {
            let written = try Blocking.run { () async throws(CoordinationError) in
                try await coordinator.takeOver(record, over: state)
            }
            if written {
                logger.warning("took over from the silent primary", metadata: ["replication.term": "\(record.term)"])
            }
            return written
        } catch {
            logger.warning("the takeover's outcome is unknown; reading the keys again", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// Serves as primary in `term` until deposed, handed over or stopped; `reason` labels the
    /// promotion's metric.
    private func serve(
        term: UInt64,
        guardRevision: Int64,
        lease: Int64,
        recorded: Set<String>,
        reason: String,
        onReady: () -> Void
    ) throws(ServiceError) -> MemberMachine.RoleEnding {
        logger.notice("won the campaign; serving as primary", metadata: ["replication.term": "\(term)"])
        startRole()
        let loop = try ServiceLoop(
            configuration: configuration,
            logger: logger,
            control: control,
            primaryTerm: PrimaryTerm(
                term: term,
                coordinator: coordinator,
                guardRevision: guardRevision,
                recorded: recorded,
                lease: lease
            ),
            replicationMetrics: metrics
        )
        metrics.promoted(reason: reason)
        try loop.run(onReady: onReady)
        if let handedOver = loop.handedOver {
            logger.notice(
                "handed over; following the new primary",
                metadata: ["replication.handover.to": "\(handedOver.to)", "replication.term": "\(handedOver.term)"]
            )
            return .handedOver
        }
        if control.isStopRequested { return .stopped }
        let expired = LeaseDeadline.now() > coordinator.leaseDeadline
        metrics.deposed(reason: expired ? "lease_expired" : "superseded")
        logger.warning("deposed; following the new primary", metadata: ["replication.lease_expired": "\(expired)"])
        return .left
    }

    /// Before a role's loop runs: a leave asked for the old role is void, and keys already seen
    /// that the new one does not match ask for the next change at once.
    private func startRole() {
        control.clearLeave()
        if machine.withLock({ $0.keysContradictRole }) { control.requestLeave() }
    }

    /// Shows a new role in `ServiceControl` (health, readiness, the gate) and the metrics. Within
    /// a role the loops may say more (a primary whose lease lapsed is `deposed`).
    private func publish(_ role: MemberMachine.Role, knownTerm: UInt64) {
        let (shown, term): (MemberRole, UInt64)
        switch role {
        case .waiting: (shown, term) = (.waiting, knownTerm)
        case .candidate: (shown, term) = (.candidate, knownTerm)
        case .standby(let primary): (shown, term) = (.standby, primary.term)
        case .primary(let won, _): (shown, term) = (.primary, won)
        }
        control.role = shown
        metrics.record(role: shown, term: term)
    }

    /// Follows the ordinal's keys and asks the loop to leave when the role no longer matches them.
    private func watch() async {
        while !Task.isCancelled {
            do {
                for try await state in coordinator.changes() {
                    if machine.withLock({ $0.observe(state) }) { control.requestLeave() }
                }
                return
            } catch {
                logger.warning("watching the ordinal's keys failed; watching again", metadata: ["error": "\(error)"])
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
