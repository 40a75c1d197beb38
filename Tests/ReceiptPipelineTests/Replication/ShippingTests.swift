import Foundation
import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsReplication
@testable import ReceiptsService

/// A primary ships its log to a standby (deploy/REPLICATION.md, section 4): the records as
/// written, at the same positions, within the standby's credit, applied through the same code
/// as recovery; a tail the primary's history lacks is cut back; terms fence a stale session.
@Suite struct ShippingTests {
    static let conversation: [EventKind] = [
        .conversationUpserted(conversation: "c", kind: .group, members: ["ann", "bob", "cat"])
    ]

    static func traffic(_ count: Int, from first: Int = 0) -> [[EventKind]] {
        (first..<first + count).map { index in
            [
                .messageSent(conversation: "c", message: "m\(index)", sender: "ann", isSystem: false),
                .delivered(conversation: "c", user: "bob", message: "m\(index)"),
                .read(conversation: "c", user: "cat", message: "m\(index)"),
            ]
        }
    }

    /// Ingests batches into the primary and settles them.
    static func ingest(_ batches: [[EventKind]], into fixture: PipelineFixture) async throws {
        for batch in batches { fixture.ingest(batch) }
        try await fixture.settle()
    }

    @Test func aStandbyEndsWithThePrimarysRecordsAndState() async throws {
        let pair = try ReplicationPair()
        try await Self.ingest([Self.conversation] + Self.traffic(200), into: pair.primary)
        try pair.start()
        try await pair.catchUp()
        // More while following.
        try await Self.ingest(Self.traffic(100, from: 200), into: pair.primary)
        try await pair.catchUp()

        #expect(pair.standby.engine.encodedState() == pair.primary.pipeline.engine.encodedState())
        #expect(pair.standby.log.appendedPosition == pair.primary.pipeline.log.appendedPosition)
        #expect(pair.shipper.progress.first?.durable == pair.primary.pipeline.log.durablePosition.offset)
        pair.standby.close()
        pair.primary.pipeline.close()
        #expect(
            try ReplicationPair.records(in: pair.standbyConfiguration.dataDirectory)
                == ReplicationPair.records(in: pair.primary.configuration.dataDirectory)
        )
    }

    @Test func theStandbyAppliesNoFurtherThanThePrimaryAcknowledged() async throws {
        let pair = try ReplicationPair()
        try await Self.ingest([Self.conversation] + Self.traffic(20), into: pair.primary)
        let halfway = pair.primary.pipeline.log.appendedPosition
        try await Self.ingest(Self.traffic(20, from: 20), into: pair.primary)
        try await pair.primary.waitUntilDurable()
        pair.acknowledgedCap.value = halfway.offset
        try pair.start()
        try pair.run(rounds: 20)
        try await pair.settleStandby()
        #expect(pair.standby.log.appendedPosition == pair.primary.pipeline.log.appendedPosition)
        #expect(pair.standby.applied == halfway)
        pair.acknowledgedCap.value = .max
        try await pair.catchUp()
        #expect(pair.standby.applied == pair.primary.pipeline.log.durablePosition)
    }

    @Test func theShipperSendsNoMoreThanTheStandbysCredit() async throws {
        let pair = try ReplicationPair(replication: { $0.windowBytes = 4096 })
        try await Self.ingest([Self.conversation] + Self.traffic(300), into: pair.primary)
        try pair.start()
        // Ship once, deliver nothing back: what went out fits the window (one record may pass it).
        var sent: UInt64 = 0
        pair.shipper.ship(now: pair.now) { outgoing in
            if case .records(let records) = outgoing.message { sent += UInt64(records.bytes.count) }
            return true
        }
        #expect(sent > 0)
        #expect(sent <= 4096 + UInt64(ReplicationFrames.recordsBatchBytes))
        #expect(sent < pair.primary.pipeline.log.durablePosition.offset)
        pair.shipper.ship(now: pair.now) { outgoing in
            if case .records = outgoing.message { Issue.record("records beyond the credit") }
            return true
        }
    }

    @Test func aMessageTheSocketRefusesGoesFirstNextTime() async throws {
        let pair = try ReplicationPair(replication: { $0.windowBytes = 1 << 20 })
        try await Self.ingest([Self.conversation] + Self.traffic(300), into: pair.primary)
        try pair.start()
        var refusals = 0
        try pair.run(rounds: 400) { _ in
            refusals += 1
            return refusals % 3 != 0
        }
        try await pair.catchUp()
        #expect(pair.standby.engine.encodedState() == pair.primary.pipeline.engine.encodedState())
    }

    @Test func refusesAStandbyOfAnotherOrdinalOrOtherSettingsOrANewerTerm() throws {
        let pair = try ReplicationPair()
        let base = ReplicationRequest.Follow(
            session: 7,
            member: "receiptd-b-0",
            workerIndex: 0,
            knownTerm: 0,
            terms: [TermStart(term: 0, start: 0, member: "")],
            logEnd: 0,
            durable: 0,
            engineSettings: "",
            windowBytes: 1 << 20
        )
        var otherIndex = base
        otherIndex.workerIndex = 1
        var otherSettings = base
        otherSettings.engineSettings = "worker_index=0\nworker_count=9\n"
        var newerTerm = base
        newerTerm.knownTerm = 4
        let expected: [(ReplicationRequest.Follow, ErrorReply.Code)] = [
            (otherIndex, .invalidArgument), (otherSettings, .invalidArgument), (newerTerm, .notPrimary),
        ]
        for (follow, code) in expected {
            let answer = pair.shipper.receive(.follow(follow), from: ReplicationPair.peer, now: pair.now)
            guard case .refused(let session, let error) = answer?.message else {
                Issue.record("\(follow) was not refused: \(String(describing: answer))")
                continue
            }
            #expect(session == 7)
            #expect(error.code == code)
        }
        #expect(pair.shipper.progress.isEmpty)
    }

    @Test func aSessionSilentForTheTimeoutEndsAndTheStandbyFollowsAgain() async throws {
        let pair = try ReplicationPair()
        try await Self.ingest([Self.conversation] + Self.traffic(10), into: pair.primary)
        try pair.start()
        try await pair.catchUp()
        let follows = pair.requests.filter(\.isFollow).count
        // Nothing reaches the standby for longer than the timeout.
        try pair.run(rounds: 3, step: pair.settings.timeoutMilliseconds) { _ in false }
        #expect(pair.requests.filter(\.isFollow).count > follows)
        try await Self.ingest(Self.traffic(10, from: 10), into: pair.primary)
        try await pair.catchUp()
        #expect(pair.standby.engine.encodedState() == pair.primary.pipeline.engine.encodedState())
    }
}

extension ShippingTests {
    /// A standby that holds a new term's records durably but has not applied the term record
    /// (the primary's acknowledged position had not reached it) follows again describing the log
    /// it holds: the primary continues at its end, and nothing it confirmed is cut.
    @Test func aStandbyFollowsAgainWithTheTermsItHoldsButHasNotApplied() async throws {
        let pair = try ReplicationPair()
        try await Self.ingest([Self.conversation] + Self.traffic(10), into: pair.primary)
        try await pair.primary.waitUntilDurable()
        let termStart = pair.primary.pipeline.log.appendedPosition
        pair.acknowledgedCap.value = termStart.offset
        try pair.primary.pipeline.startTerm(2, member: "receiptd-0")
        pair.shipper.update(terms: pair.primary.pipeline.terms)
        try await Self.ingest(Self.traffic(10, from: 10), into: pair.primary)
        try await pair.primary.waitUntilDurable()
        try pair.start()
        try pair.run(rounds: 20)
        try await pair.settleStandby()
        let end = pair.standby.log.appendedPosition
        #expect(end == pair.primary.pipeline.log.appendedPosition)
        #expect(pair.standby.applied <= termStart, "applied past the acknowledged position")

        // The session goes silent and the standby follows again.
        try pair.run(rounds: 3, step: pair.settings.timeoutMilliseconds) { _ in false }
        try pair.run(rounds: 5)
        let accepted = pair.shipped.compactMap { message -> ReplicationMessage.FollowAccepted? in
            if case .accepted(let accepted) = message { return accepted }
            return nil
        }
        #expect(accepted.count >= 2)
        #expect(accepted.last?.continueAt == end.offset, "the standby was told to cut what it held")
        pair.acknowledgedCap.value = .max
        try await pair.catchUp()
        #expect(pair.standby.applier.terms == pair.primary.pipeline.terms)
        #expect(pair.standby.engine.encodedState() == pair.primary.pipeline.engine.encodedState())
    }
}

extension ReplicationMessage {
    var isHeartbeat: Bool {
        if case .heartbeat = self { return true }
        return false
    }
}

extension ReplicationRequest {
    var isFollow: Bool {
        if case .follow = self { return true }
        return false
    }
}
