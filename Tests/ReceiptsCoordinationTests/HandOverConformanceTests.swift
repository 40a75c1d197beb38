import ReceiptsReplication
import ReceiptsTestTraits
import Testing

/// The hand-over transaction (deploy/REPLICATION.md, section 12.2) against both coordinators:
/// the `handover` key and the primary key's deletion land together, under the primary's guard.
@Suite(.timeLimit(.minutes(1)), .ownThread)
struct HandOverConformanceTests {
    @Test(arguments: Backend.allCases)
    func aHandOverWritesTheRecordAndDeletesThePrimaryKeyAtOnce(backend: Backend) async throws {
        try await CoordinatorConformanceTests.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            let b = try await harness.coordinator(member: "receiptd-b-3")
            guard
                case .won(let guardRevision) = try await CoordinatorConformanceTests.campaign(a, "receiptd-3", term: 1)
            else {
                Issue.record("the campaign lost")
                return
            }
            let watcher = StateRecorder(b.changes())
            try await harness.waitUntil("the watcher's first state") { !watcher.states.isEmpty }
            #expect(watcher.states.first?.handOver == nil)

            let record = HandOverRecord(term: 1, to: "receiptd-b-3")
            #expect(try await a.handOver(record, guardRevision: guardRevision))
            let state = try await b.state()
            #expect(state.primary == nil)
            #expect(state.handOver == record)
            #expect(state.term == 1)
            // One transaction: no watcher ever sees the record beside the primary key, or the
            // primary key gone without the record.
            try await harness.waitUntil("the watcher seeing the hand-over") { watcher.states.last?.handOver == record }
            for seen in watcher.states {
                #expect((seen.primary == nil) == (seen.handOver != nil), "\(seen)")
            }
        }
    }

    @Test(arguments: Backend.allCases)
    func aHandOverUnderAnotherGuardChangesNothing(backend: Backend) async throws {
        try await CoordinatorConformanceTests.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            guard
                case .won(let guardRevision) = try await CoordinatorConformanceTests.campaign(a, "receiptd-3", term: 1)
            else {
                Issue.record("the campaign lost")
                return
            }
            let record = HandOverRecord(term: 1, to: "receiptd-b-3")
            #expect(try await !a.handOver(record, guardRevision: guardRevision + 1))
            let state = try await a.state()
            #expect(state.primary?.member == "receiptd-3")
            #expect(state.handOver == nil)

            // Once resigned, the old guard hands nothing over either.
            try await a.resign(guardRevision: guardRevision)
            #expect(try await !a.handOver(record, guardRevision: guardRevision))
            #expect(try await a.state().handOver == nil)
        }
    }

    /// A takeover (section 6.5) is a hand-over on a silent primary's behalf, by the member named,
    /// over the keys as it read them: an in-sync record written since, or a primary key made
    /// anew, makes it write nothing.
    @Test(arguments: Backend.allCases)
    func aTakeoverDeposesOnlyOverTheKeysAsRead(backend: Backend) async throws {
        try await CoordinatorConformanceTests.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            let b = try await harness.coordinator(member: "receiptd-b-3")
            guard
                case .won(let guardRevision) = try await CoordinatorConformanceTests.campaign(a, "receiptd-3", term: 1)
            else {
                Issue.record("the campaign lost")
                return
            }
            let inSync = InSyncRecord(term: 1, standbys: ["receiptd-b-3"], ack: "standby")
            #expect(try await a.recordInSync(inSync, guardRevision: guardRevision))
            let read = try await b.state()
            let record = HandOverRecord(term: 1, to: "receiptd-b-3")

            // The primary shrinks its set after b read the keys: b deposes nobody.
            let shrunk = InSyncRecord(term: 1, standbys: [], ack: "standby")
            #expect(try await a.recordInSync(shrunk, guardRevision: guardRevision))
            #expect(try await !b.takeOver(record, over: read))
            var state = try await b.state()
            #expect(state.primary?.member == "receiptd-3")
            #expect(state.handOver == nil)

            // Over the keys as they are, b takes the term over.
            #expect(try await a.recordInSync(inSync, guardRevision: guardRevision))
            let fresh = try await b.state()
            #expect(try await b.takeOver(record, over: fresh))
            state = try await b.state()
            #expect(state.primary == nil)
            #expect(state.handOver == record)
            #expect(state.inSync == inSync)
            // The old keys take nothing over twice.
            #expect(try await !b.takeOver(record, over: fresh))
        }
    }

    /// The named member campaigns over the state the hand-over left, and wins the next term; the
    /// record stays, naming the term that ended.
    @Test(arguments: Backend.allCases)
    func theNamedMemberWinsTheNextTerm(backend: Backend) async throws {
        try await CoordinatorConformanceTests.withHarness(backend) { harness in
            let a = try await harness.coordinator(member: "receiptd-3")
            let b = try await harness.coordinator(member: "receiptd-b-3")
            guard
                case .won(let guardRevision) = try await CoordinatorConformanceTests.campaign(a, "receiptd-3", term: 1)
            else {
                Issue.record("the campaign lost")
                return
            }
            #expect(try await a.handOver(HandOverRecord(term: 1, to: "receiptd-b-3"), guardRevision: guardRevision))
            guard case .won = try await CoordinatorConformanceTests.campaign(b, "receiptd-b-3", term: 2) else {
                Issue.record("the named member's campaign lost")
                return
            }
            let state = try await a.state()
            #expect(state.primary?.member == "receiptd-b-3")
            #expect(state.term == 2)
            #expect(state.handOver == HandOverRecord(term: 1, to: "receiptd-b-3"))
        }
    }
}
