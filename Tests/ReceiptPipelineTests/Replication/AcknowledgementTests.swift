import Foundation
import ReceiptsCore
import ReceiptsReplication
import ReceiptsWire
import Synchronization
import Testing
import ZeroMQ

@testable import ReceiptsService

/// `--replication-ack standby` (deploy/REPLICATION.md, section 5): a reply and a published
/// status wait until the standby holds the records durably; with no standby in sync under
/// `stall`, new ingest is refused before it is applied; under `local`, the primary acknowledges
/// alone.
@Suite struct AcknowledgementTests {
    static func ingestReplies(_ fixture: PipelineFixture) -> Int {
        fixture.sink.outputs.filter {
            if case .reply(.ingest, _, _) = $0 { return true }
            return false
        }.count
    }

    /// Ingest replies without an error: frames acknowledged.
    static func acknowledgedFrames(_ fixture: PipelineFixture) throws -> Int {
        try fixture.sink.outputs.filter {
            guard case .reply(.ingest, let body, _) = $0 else { return false }
            return try IngestReply.decode(body).error == nil
        }.count
    }

    static func gatedPair(fallback: ReplicationSettings.Fallback = .stall) throws -> ReplicationPair {
        let gate = ReplicationGate(position: 0, wake: {})
        return try ReplicationPair(primary: try PipelineFixture(gate: gate), replication: { $0.fallback = fallback })
    }

    @Test func aReplyWaitsUntilTheStandbyHoldsTheRecordsDurably() async throws {
        let pair = try Self.gatedPair()
        try pair.start()
        try pair.run(rounds: 5)
        pair.primary.ingest(ShippingTests.conversation)
        try await pair.primary.waitUntilDurable()
        try pair.primary.pipeline.advance(now: ServiceClock.monotonicMilliseconds())
        #expect(Self.ingestReplies(pair.primary) == 0, "acknowledged before the standby had it")
        try await pair.catchUp()
        try pair.primary.pipeline.advance(now: ServiceClock.monotonicMilliseconds())
        #expect(Self.ingestReplies(pair.primary) == 1)
        #expect(pair.standby.log.durablePosition >= pair.primary.pipeline.frontier.position)
    }

    @Test func withNoStandbyInSyncUnderStallNewIngestIsRefusedAndNothingApplied() async throws {
        let pair = try Self.gatedPair()
        // No standby ever follows; the shipper decides once the timeout has passed (on the pair's
        // clock, which the exchange below goes on from: the shipper's time never goes back).
        pair.now += pair.settings.timeoutMilliseconds + 1
        pair.shipper.ship(now: pair.now) { _ in true }
        let before = pair.primary.pipeline.log.appendedPosition
        pair.primary.ingest(ShippingTests.conversation)
        try pair.primary.pipeline.advance(now: ServiceClock.monotonicMilliseconds())
        guard case .reply(.ingest, let body, _)? = pair.primary.sink.outputs.last else {
            throw PipelineTestError("no reply to the refused frame")
        }
        let reply = try IngestReply.decode(body)
        #expect(reply.error?.code == .unavailable)
        #expect(reply.results.isEmpty)
        #expect(pair.primary.pipeline.log.appendedPosition == before)
        #expect(pair.primary.counter("receiptd.replication.refused_frames") == 1)
        // A standby joins: ingest is taken again, and acknowledged once the standby has it.
        try pair.start()
        try pair.run(rounds: 5)
        pair.primary.ingest(ShippingTests.conversation)
        try await pair.catchUp()
        try pair.primary.pipeline.advance(now: ServiceClock.monotonicMilliseconds())
        let replies = try pair.primary.sink.outputs.compactMap { output -> IngestReply? in
            guard case .reply(.ingest, let body, _) = output else { return nil }
            return try IngestReply.decode(body)
        }
        #expect(replies.count == 2)
        #expect(replies.last?.error == nil)
    }

    /// Issue 29: once a frame waits for a standby that went away, new frames on other
    /// connections are refused at once and health is answered at once (both waited behind it).
    @Test func aFrameWaitingForALostStandbyHoldsNoRefusalAndNoHealthAnswer() async throws {
        let pair = try Self.gatedPair()
        try pair.start()
        try await pair.catchUp()
        // Frame A is applied and durable here; the standby never confirms it.
        pair.primary.ingest(ShippingTests.conversation, peer: "gateway-a")
        try await pair.primary.waitUntilDurable()
        pair.now += pair.settings.timeoutMilliseconds + 1
        pair.shipper.ship(now: pair.now) { _ in false }
        try pair.primary.pipeline.advance(now: ServiceClock.monotonicMilliseconds())
        #expect(Self.ingestReplies(pair.primary) == 0, "frame A waits for a standby")

        let before = pair.primary.sink.outputs.count
        pair.primary.ingest(ShippingTests.traffic(1)[0], peer: "gateway-b")
        pair.primary.send(.health)
        let answered = pair.primary.sink.outputs.dropFirst(before).compactMap { output -> (String, [UInt8])? in
            guard case .reply(let endpoint, let body, _) = output else { return nil }
            return ("\(endpoint)", body)
        }
        #expect(answered.map(\.0) == ["ingest", "queries"], "both answered at once, without an advance")
        if let refusal = answered.first, refusal.0 == "ingest" {
            #expect(try IngestReply.decode(refusal.1).error?.code == .unavailable)
        }
        if let health = answered.last, health.0 == "queries", case .health(let state) = try QueryReply.decode(health.1)
        {
            #expect(state.state == "serving")
        } else {
            Issue.record("no health answer")
        }
        #expect(pair.primary.counter("receiptd.replication.refused_frames") == 1)
        #expect(Self.ingestReplies(pair.primary) == 1, "frame A still waits")
    }

    /// Issue 29: health said "primary" while the member answered ingest NOT_PRIMARY (its lease
    /// lapsed); it says what ingest says now.
    @Test func aPrimaryWhoseLeaseLapsedSaysDeposedInHealth() async throws {
        let gate = ReplicationGate(position: 0, wake: {})
        let fixture = try PipelineFixture(gate: gate) {
            $0.replication = ReplicationSettings(member: "receiptd-0", role: .primary, endpoint: "inproc://r")
        }
        func role() async throws -> MemberRole? {
            guard case .health(let health) = try await fixture.ask(.health) else {
                throw PipelineTestError("no health answer")
            }
            return health.role
        }
        // `/readyz` reads the role through the service's control: it says the same.
        let control = ServiceControl(doorbell: try Doorbell())
        control.role = .primary
        control.primaryGate = gate
        #expect(try await role() == .primary && control.role == .primary)
        gate.update(replicatedPosition: 0, refusal: .leaseExpired)
        #expect(try await role() == .deposed && control.role == .deposed)
        fixture.ingest(ShippingTests.conversation)
        guard case .reply(.ingest, let body, _)? = fixture.sink.outputs.last else {
            throw PipelineTestError("no reply to the refused frame")
        }
        #expect(try IngestReply.decode(body).error?.code == .notPrimary)
        gate.update(replicatedPosition: 0, refusal: .none)
        #expect(try await role() == .primary && control.role == .primary)
        // Unreplicated, a worker names no role.
        guard case .health(let unreplicated) = try await PipelineFixture().ask(.health) else {
            throw PipelineTestError("no health answer")
        }
        #expect(unreplicated.role == nil)
    }

    /// Issue 29: the shipper judges its lease on the time it is given, as every other rule of
    /// it (it read the real monotonic clock, so no test or simulation could move its deadline).
    /// A frame the standby confirms only after the deadline is not acknowledged until a renewal.
    @Test func theGateFreezesAtTheLeaseDeadlineOnTheShippersClockAndThawsOnRenewal() async throws {
        let gate = ReplicationGate(position: 0, wake: {})
        // Nanoseconds on the pair's clock (milliseconds): 1,000 s ahead of its start.
        let deadline = LeaseDeadlineValue(1_001_000 * 1_000_000)
        let pair = try ReplicationPair(
            primary: try PipelineFixture(gate: gate),
            leaseDeadline: { deadline.nanoseconds.load(ordering: .relaxed) }
        )
        try pair.start()
        pair.primary.ingest(ShippingTests.conversation)
        try await pair.catchUp()
        #expect(try Self.acknowledgedFrames(pair.primary) == 1, "acknowledged while the lease is alive")
        #expect(gate.refusal == .none)

        // Frame 2 is durable here; the standby gets it only once the deadline has passed.
        pair.primary.ingest(ShippingTests.traffic(1)[0])
        try await pair.primary.waitUntilDurable()
        deadline.nanoseconds.store(UInt64(pair.now) * 1_000_000, ordering: .relaxed)
        try pair.run(rounds: 20)
        try await pair.settleStandby()
        try pair.primary.pipeline.advance(now: ServiceClock.monotonicMilliseconds())
        #expect(pair.standby.log.durablePosition >= pair.primary.pipeline.log.durablePosition)
        #expect(gate.refusal == .leaseExpired)
        #expect(Self.ingestReplies(pair.primary) == 1, "answered after the lease deadline")

        // A renewal moves the deadline: what the standby holds is acknowledged.
        deadline.nanoseconds.store(UInt64(pair.now + 10_000) * 1_000_000, ordering: .relaxed)
        try await pair.catchUp()
        #expect(gate.refusal == .none)
        #expect(try Self.acknowledgedFrames(pair.primary) == 2)
    }

    @Test func underLocalFallbackThePrimaryAcknowledgesAlone() async throws {
        let pair = try Self.gatedPair(fallback: .local)
        pair.shipper.ship(now: 1_001) { _ in true }
        pair.primary.ingest(ShippingTests.conversation)
        try await pair.primary.settle()
        #expect(Self.ingestReplies(pair.primary) == 1)
        #expect(pair.shipper.verdict?.unsynced == true)
    }

    @Test func underLocalAcknowledgementMoveStepsAreRefusedBeforeAnythingIsApplied() async throws {
        let fixture = try PipelineFixture {
            var settings = ReplicationSettings(member: "receiptd-0", role: .primary, endpoint: "inproc://r")
            settings.acknowledgement = .local
            $0.replication = settings
        }
        let before = fixture.pipeline.log.appendedPosition
        let reply = try await fixture.ask(.prepareMove(epoch: 7, from: 1, to: 2))
        guard case .error(let error) = reply else { throw PipelineTestError("the step was not refused: \(reply)") }
        #expect(error.code == .invalidArgument)
        #expect(error.message.contains("--replication-ack standby"))
        #expect(fixture.pipeline.log.appendedPosition == before)
        #expect(fixture.pipeline.engine.topology.moveEpoch == 0)
    }
}

/// A lease deadline a test moves while the shipper reads it.
final class LeaseDeadlineValue: Sendable {
    let nanoseconds: Atomic<UInt64>

    init(_ nanoseconds: UInt64) {
        self.nanoseconds = Atomic(nanoseconds)
    }
}
