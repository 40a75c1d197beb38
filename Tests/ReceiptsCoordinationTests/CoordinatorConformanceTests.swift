import ReceiptsReplication
import ReceiptsTestTraits
import Testing

/// The same scenarios against `InMemoryCoordinator` and against `EtcdCoordinator` on a real
/// etcd (deploy/REPLICATION.md, section 16): what the replication core relies on, whichever
/// service it runs on. Each test starts its own service; etcd's waits are real time, bounded.
@Suite(.timeLimit(.minutes(1)), .ownThread)
struct CoordinatorConformanceTests {
    static func primary(_ member: String, term: UInt64) -> PrimaryRecord {
        PrimaryRecord(
            member: member,
            term: term,
            replication: "tcp://\(member):7005",
            ingest: "tcp://\(member):7001",
            query: "tcp://\(member):7004",
            publish: "tcp://\(member):7003"
        )
    }

    static func inSync(term: UInt64, _ standbys: [String]) -> InSyncRecord {
        InSyncRecord(term: term, standbys: standbys, ack: "standby")
    }

    /// Runs `body` on a fresh service of `backend`, tearing it down however `body` ends.
    static func withHarness(
        _ backend: Backend,
        _ body: (any CoordinationHarness) async throws -> Void
    ) async throws {
        let harness = try await backend.harness()
        do {
            try await body(harness)
        } catch {
            await harness.tearDown()
            throw error
        }
        await harness.tearDown()
    }

    /// Campaigns for `member` over the state read now.
    static func campaign(_ coordinator: any Coordinator, _ member: String, term: UInt64) async throws -> CampaignOutcome
    {
        let state = try await coordinator.state()
        return try await coordinator.campaign(primary(member, term: term), inSync: inSync(term: term, []), over: state)
    }

    @Test(arguments: Backend.allCases)
    func aNewOrdinalsCampaignWinsTermOne(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            let before = try await a.state()
            #expect(before.primary == nil && before.term == 0 && before.termRevision == 0 && before.inSync == nil)

            let outcome = try await a.campaign(
                Self.primary("receiptd-3", term: 1),
                inSync: Self.inSync(term: 1, ["receiptd-b-3"]),
                over: before
            )
            guard case .won(let guardRevision) = outcome else {
                Issue.record("the campaign lost: \(outcome)")
                return
            }
            #expect(guardRevision > before.revision)
            let after = try await a.state()
            #expect(after.primary == Self.primary("receiptd-3", term: 1))
            #expect(after.primaryRevision == guardRevision)
            #expect(after.term == 1 && after.termRevision == guardRevision)
            #expect(after.inSync == Self.inSync(term: 1, ["receiptd-b-3"]))
            #expect(after.inSyncRevision == guardRevision)
            #expect(after.revision == guardRevision)
        }
    }

    @Test(arguments: Backend.allCases)
    func aSecondMembersCampaignLosesAndGetsTheWinnersState(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            let b = try await harness.coordinator(member: "receiptd-b-3")
            let seenByBoth = try await a.state()
            let won = try await a.campaign(
                Self.primary("receiptd-3", term: 1),
                inSync: Self.inSync(term: 1, []),
                over: seenByBoth
            )
            guard case .won(let guardRevision) = won else {
                Issue.record("the first campaign lost: \(won)")
                return
            }
            let lost = try await b.campaign(
                Self.primary("receiptd-b-3", term: 1),
                inSync: Self.inSync(term: 1, []),
                over: seenByBoth
            )
            guard case .lost(let state) = lost else {
                Issue.record("the second campaign won too: \(lost)")
                return
            }
            #expect(state.primary?.member == "receiptd-3")
            #expect(state.primaryRevision == guardRevision)
            #expect(state.term == 1)
            #expect(try await b.state().primary?.member == "receiptd-3")
        }
    }

    @Test(arguments: Backend.allCases)
    func aCampaignOverAStaleStateLoses(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            let b = try await harness.coordinator(member: "receiptd-b-3")
            let stale = try await b.state()
            guard case .won(let guardRevision) = try await Self.campaign(a, "receiptd-3", term: 1) else {
                Issue.record("the first campaign lost")
                return
            }
            try await a.resign(guardRevision: guardRevision)

            // No primary now, but the term moved since `stale` was read.
            let outcome = try await b.campaign(
                Self.primary("receiptd-b-3", term: 1),
                inSync: Self.inSync(term: 1, []),
                over: stale
            )
            guard case .lost(let state) = outcome else {
                Issue.record("a campaign over a stale term won: \(outcome)")
                return
            }
            #expect(state.primary == nil)
            #expect(state.term == 1)

            // Over the state as it is now, it wins term 2.
            guard
                case .won = try await b.campaign(
                    Self.primary("receiptd-b-3", term: 2),
                    inSync: Self.inSync(term: 2, []),
                    over: state
                )
            else {
                Issue.record("a campaign over the current state lost")
                return
            }
            #expect(try await a.state().term == 2)
        }
    }

    @Test(arguments: Backend.allCases)
    func recordInSyncNeedsTheGuardAndThePrimaryKey(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            guard case .won(let guardRevision) = try await Self.campaign(a, "receiptd-3", term: 1) else {
                Issue.record("the campaign lost")
                return
            }
            let grown = Self.inSync(term: 1, ["receiptd-b-3"])
            #expect(try await a.recordInSync(grown, guardRevision: guardRevision))
            let state = try await a.state()
            #expect(state.inSync == grown)
            #expect(state.inSyncRevision > guardRevision)

            #expect(try await !a.recordInSync(Self.inSync(term: 1, []), guardRevision: guardRevision + 1))
            #expect(try await a.state().inSync == grown)

            try await a.resign(guardRevision: guardRevision)
            #expect(try await !a.recordInSync(Self.inSync(term: 1, []), guardRevision: guardRevision))
            #expect(try await a.state().inSync == grown)
        }
    }

    @Test(arguments: Backend.allCases)
    func resignDeletesThePrimaryKeyAndAWatcherSeesIt(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            let b = try await harness.coordinator(member: "receiptd-b-3")
            guard case .won(let guardRevision) = try await Self.campaign(a, "receiptd-3", term: 1) else {
                Issue.record("the campaign lost")
                return
            }
            let watcher = StateRecorder(b.changes())
            try await harness.waitUntil("the watcher's first state") { !watcher.states.isEmpty }
            #expect(watcher.states.first?.primary?.member == "receiptd-3")

            // A resignation with another guard changes nothing.
            try await a.resign(guardRevision: guardRevision + 1)
            #expect(try await b.state().primary?.member == "receiptd-3")

            try await a.resign(guardRevision: guardRevision)
            try await harness.waitUntil("the watcher seeing the primary key gone") {
                watcher.states.last?.primary == nil
            }
            #expect(watcher.states.last?.term == 1)
            #expect(!watcher.ended)
        }
    }

    @Test(arguments: Backend.allCases)
    func anExpiredLeaseTakesThePrimaryKeyAndWatchersSeeIt(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            // A TTL of 6 s: renewals (every 2 s) keep it alive unless etcd stalls for 4 s. With 3 s, a
            // clean-clone run under the whole suite saw it expire while renewed, and the lease
            // granted after it moved the deadline on.
            let a = try await harness.coordinator(member: "receiptd-3", ordinal: 3, ttlSeconds: 6)
            let b = try await harness.coordinator(member: "receiptd-b-3")
            guard case .won = try await Self.campaign(a, "receiptd-3", term: 1) else {
                Issue.record("the campaign lost")
                return
            }
            let lease = a.lease
            let watcher = StateRecorder(b.changes())
            try await harness.waitUntil("the watcher's first state") { !watcher.states.isEmpty }
            // Renewals keep it alive past its TTL.
            for _ in 0..<70 { try await harness.tick() }
            #expect(try await b.state().primary?.member == "receiptd-3")
            #expect(a.lease == lease, "the lease was renewed, not lost and granted again")

            harness.stopRenewals(of: "receiptd-3")
            try await harness.waitUntil("the primary key's expiry", seconds: 15) { try await b.state().primary == nil }
            try await harness.waitUntil("the watcher seeing the expiry") { watcher.states.last?.primary == nil }
            #expect(watcher.states.first?.primary?.member == "receiptd-3")
            #expect(a.leaseDeadline < harness.now())
        }
    }

    @Test(arguments: Backend.allCases)
    func theLeaseDeadlineIsAheadOfTheRealExpiry(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            // 6 s, as above: with 3 s a stalled etcd let the lease expire while it was renewed.
            let a = try await harness.coordinator(member: "receiptd-3", ordinal: 3, ttlSeconds: 6)
            #expect(a.leaseDeadline > harness.now())
            guard case .won = try await Self.campaign(a, "receiptd-3", term: 1) else {
                Issue.record("the campaign lost")
                return
            }
            // Renewals move the deadline on.
            let first = a.leaseDeadline
            try await harness.waitUntil("a renewal", seconds: 6) { a.leaseDeadline > first }

            harness.stopRenewals(of: "receiptd-3")
            // A renewal in flight may still land: take the deadline once it stops moving.
            for _ in 0..<10 { try await harness.tick() }
            let deadline = a.leaseDeadline
            // The key may be seen gone only after the deadline. The time is taken once the answer
            // is in: taken before the call, a slow answer (a loaded etcd) saying "gone" after the
            // deadline would look like one seen before it.
            var observedGone: UInt64 = 0
            try await harness.waitUntil("the expiry", seconds: 15) {
                guard try await a.state().primary == nil else { return false }
                observedGone = harness.now()
                return true
            }
            #expect(observedGone >= deadline, "the lease expired before its deadline")
            #expect(a.leaseDeadline == deadline)
        }
    }

    @Test(arguments: Backend.allCases)
    func aLeaseTheServiceEndedIsGrantedAgain(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            // The lease is ended by the service, not by a missed renewal: a TTL with room for a
            // loaded machine's late keepalives (renewals every TTL/3).
            let a = try await harness.coordinator(member: "receiptd-3", ordinal: 3, ttlSeconds: 4)
            let b = try await harness.coordinator(member: "receiptd-b-3")
            guard case .won = try await Self.campaign(a, "receiptd-3", term: 1) else {
                Issue.record("the campaign lost")
                return
            }
            let watcher = StateRecorder(b.changes())
            try await harness.waitUntil("the watcher's first state") { !watcher.states.isEmpty }
            #expect(watcher.states.first?.primary?.member == "receiptd-3")
            let firstLease = a.lease
            #expect(firstLease != 0)
            try await harness.endLease(of: "receiptd-3")
            try await harness.waitUntil("the watcher seeing the primary key gone") {
                watcher.states.last?.primary == nil
            }
            // The next renewal round finds the lease gone and grants another: a campaign wins again.
            try await harness.waitUntil("a campaign with a new lease") {
                guard case .won = try? await Self.campaign(a, "receiptd-3", term: 2) else { return false }
                return true
            }
            #expect(try await b.state().primary == Self.primary("receiptd-3", term: 2))
            #expect(a.leaseDeadline > harness.now())
            // A new grant is a new lease: a primary of the old one can tell its key is gone.
            #expect(a.lease != firstLease && a.lease != 0)
        }
    }

    @Test(arguments: Backend.allCases)
    func closeRevokesTheLeaseAndEndsTheStreams(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            let b = try await harness.coordinator(member: "receiptd-b-3")
            guard case .won = try await Self.campaign(a, "receiptd-3", term: 1) else {
                Issue.record("the campaign lost")
                return
            }
            let own = StateRecorder(a.changes())
            let other = StateRecorder(b.changes())
            try await harness.waitUntil("both first states") { !own.states.isEmpty && !other.states.isEmpty }

            await a.close()
            // No TTL to wait for: the revocation takes the key at once.
            #expect(try await b.state().primary == nil)
            try await harness.waitUntil("the other watcher seeing it") { other.states.last?.primary == nil }
            try await harness.waitUntil("the closed coordinator's stream ending") { own.ended }
            #expect(own.error == nil)
            #expect(!other.ended)
        }
    }

    @Test(arguments: Backend.allCases)
    func anUnreachableServiceFailsCallsAndEndsStreams(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            let watcher = StateRecorder(a.changes())
            try await harness.waitUntil("the first state") { !watcher.states.isEmpty }

            harness.makeUnavailable()
            await #expect(throws: CoordinationError.self) { try await a.state() }
            await #expect(throws: CoordinationError.self) { try await Self.campaign(a, "receiptd-3", term: 1) }
            try await harness.waitUntil("the stream throwing") { watcher.ended }
            #expect(watcher.error is CoordinationError)
        }
    }

    @Test(arguments: Backend.allCases)
    func aWatcherSeesOnlyItsOrdinal(backend: Backend) async throws {
        try await Self.withHarness(backend) { harness in
            let three = try await harness.coordinator(member: "receiptd-3", ordinal: 3)
            let thirty = try await harness.coordinator(member: "receiptd-30", ordinal: 30)
            let watcher = StateRecorder(three.changes())
            try await harness.waitUntil("the first state") { !watcher.states.isEmpty }

            // Ordinal 30's keys share the prefix ".../3" but not ".../3/".
            guard case .won = try await Self.campaign(thirty, "receiptd-30", term: 1) else {
                Issue.record("the campaign of ordinal 30 lost")
                return
            }
            #expect(try await three.state().primary == nil)
            guard case .won = try await Self.campaign(three, "receiptd-3", term: 1) else {
                Issue.record("the campaign of ordinal 3 lost")
                return
            }
            try await harness.waitUntil("ordinal 3's primary") { watcher.states.last?.primary != nil }
            #expect(watcher.states.allSatisfy { $0.primary == nil || $0.primary?.member == "receiptd-3" })
        }
    }
}
