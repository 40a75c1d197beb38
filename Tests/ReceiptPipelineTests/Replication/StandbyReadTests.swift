import Foundation
import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptsReplication
@testable import ReceiptsService

/// Follower reads (deploy/REPLICATION.md, section 10), in process: a standby answers queries that
/// accept a standby's answer from the engine it applied up to the primary's acknowledged
/// position, says so in `served_by`, and answers `UNAVAILABLE` once cut off from its primary past
/// the staleness bound.
@Suite struct StandbyReadTests {
    /// The queries about conversation "c" whose answers the standby must share with the primary.
    static func reads(upTo last: Int) -> [Query] {
        [
            .messageStatus(conversation: "c", message: "m0", viewer: Viewer(user: "ann")),
            .messageStatus(conversation: "c", message: "m\(last)", viewer: Viewer(user: "bob")),
            .readDetail(conversation: "c", message: "m\(last)"),
            .lastSent(conversation: "c", viewer: Viewer(user: "ann")),
            .unreadCounts(user: "bob", conversations: ["c"]),
            .unreadCounts(user: "cat", conversations: []),
        ]
    }

    /// The part of an answer a standby shares with the primary: all of it, but for the read-state
    /// stream position of unread counts (a standby publishes nothing, so it answers epoch 0 and a
    /// read-state subscriber repairs from the primary).
    static func shared(_ answer: QueryReply) -> QueryReply {
        guard case .unreadCounts(let counts, _, _, _) = answer else { return answer }
        return .unreadCounts(counts)
    }

    /// Batches in which bob has m`first`... delivered but unread, and cat read them.
    static func traffic(_ count: Int, from first: Int = 0) -> [[EventKind]] {
        ShippingTests.traffic(count, from: first)
    }

    @Test func aStandbyAnswersAsThePrimaryDoesForAcknowledgedState() async throws {
        let pair = try ReplicationPair()
        try await ShippingTests.ingest([ShippingTests.conversation] + Self.traffic(30), into: pair.primary)
        try pair.start()
        try await pair.catchUp()
        for query in Self.reads(upTo: 29) {
            let (answer, servedBy) = try pair.askStandby(query)
            #expect(answer == Self.shared(try await pair.primary.ask(query)), "\(query.kindName)")
            #expect(
                servedBy
                    == ServedBy(
                        member: "receiptd-b-0",
                        role: .standby,
                        term: pair.standby.follower.knownTerm,
                        applied: pair.standby.applied.offset,
                        behindMilliseconds: 0
                    )
            )
        }
        // A conversation the engine does not know is NOT_FOUND there as on the primary, and served.
        let unknown = Query.readDetail(conversation: "nowhere", message: "m0")
        let (answer, servedBy) = try pair.askStandby(unknown)
        #expect(answer == (try await pair.primary.ask(unknown)))
        #expect(servedBy?.role == .standby)
    }

    @Test func aStandbyShowsNothingBeyondTheAcknowledgedPosition() async throws {
        let pair = try ReplicationPair()
        try await ShippingTests.ingest([ShippingTests.conversation] + Self.traffic(10), into: pair.primary)
        let acknowledgedAnswers = try await Self.reads(upTo: 9).asyncMap { Self.shared(try await pair.primary.ask($0)) }
        pair.acknowledgedCap.value = pair.primary.pipeline.log.durablePosition.offset
        try await ShippingTests.ingest(Self.traffic(10, from: 10), into: pair.primary)
        try pair.start()
        try pair.run(rounds: 20)
        try await pair.settleStandby()
        #expect(pair.standby.log.appendedPosition == pair.primary.pipeline.log.appendedPosition)

        // The standby holds every record, but answers as of the acknowledged position.
        #expect(try Self.reads(upTo: 9).map { try pair.askStandby($0).reply } == acknowledgedAnswers)
        let beyond = Query.messageStatus(conversation: "c", message: "m15", viewer: Viewer(user: "ann"))
        guard case .error(let error) = try pair.askStandby(beyond).reply else {
            Issue.record("a message past the acknowledged position was shown")
            return
        }
        #expect(error.code == .notFound)
        guard case .messageStatus = try await pair.primary.ask(beyond) else {
            Issue.record("the primary does not know m15")
            return
        }
        pair.acknowledgedCap.value = .max
        try await pair.catchUp()
        #expect(try pair.askStandby(beyond).reply == (try await pair.primary.ask(beyond)))
    }

    @Test func aQueryThatDoesNotAcceptAStandbyIsAnsweredNotPrimary() async throws {
        let pair = try ReplicationPair()
        try await ShippingTests.ingest([ShippingTests.conversation] + Self.traffic(3), into: pair.primary)
        try pair.start()
        try await pair.catchUp()
        for query in Self.reads(upTo: 2) {
            let (answer, servedBy) = try pair.askStandby(query, allowStandby: false)
            #expect(answer.errorCode == .notPrimary, "\(query.kindName)")
            #expect(servedBy == nil)
        }
        // The move steps, the rebalance driver's view and compaction stay with the primary.
        for query in [Query.topology, .commitMove(epoch: 1), .compact] {
            #expect(try pair.askStandby(query).reply.errorCode == .notPrimary, "\(query.kindName)")
        }
        // Health and stats are about the member itself.
        guard case .health(let health) = try pair.askStandby(.health, allowStandby: false).reply else {
            Issue.record("health not answered")
            return
        }
        #expect(health.role == .standby)
        #expect(health.applied == pair.standby.applied.offset)
        guard case .stats = try pair.askStandby(.stats).reply else {
            Issue.record("stats not answered")
            return
        }
        // A snapshot continues no update stream of the standby's: it publishes nothing.
        guard
            case .snapshot(_, let run, let sequence) = try pair.askStandby(.snapshot(conversation: "c", limit: 0)).reply
        else {
            Issue.record("no snapshot")
            return
        }
        #expect(run == 0 && sequence == 0)
    }

    @Test func aStandbyCutOffPastTheStalenessBoundAnswersUnavailable() async throws {
        let pair = try ReplicationPair(replication: { $0.standbyMaxStalenessMilliseconds = 300 })
        let query = Query.unreadCounts(user: "bob", conversations: ["c"])
        // Before any primary was heard from.
        #expect(try pair.askStandby(query).reply.errorCode == .unavailable)
        try await ShippingTests.ingest([ShippingTests.conversation] + Self.traffic(3), into: pair.primary)
        try pair.start()
        try await pair.catchUp()
        #expect(try pair.askStandby(query).servedBy != nil)

        // The primary goes silent: the session times out, and no Follow is answered.
        pair.now += 200
        _ = try pair.standby.advance(now: pair.now)
        #expect(try pair.askStandby(query).servedBy != nil, "within the bound")
        pair.now += pair.settings.timeoutMilliseconds
        _ = try pair.standby.advance(now: pair.now)
        let (answer, servedBy) = try pair.askStandby(query)
        #expect(answer.errorCode == .unavailable)
        #expect(servedBy == nil)

        // Heard from again: served.
        try pair.start()
        try pair.run(rounds: 5)
        #expect(try pair.askStandby(query).servedBy != nil)
    }

    @Test func aRestartedStandbyAheadOfTheAcknowledgedPositionWaitsForIt() async throws {
        let pair = try ReplicationPair()
        try await ShippingTests.ingest([ShippingTests.conversation] + Self.traffic(10), into: pair.primary)
        let halfway = pair.primary.pipeline.log.durablePosition.offset
        try await ShippingTests.ingest(Self.traffic(10, from: 10), into: pair.primary)
        try pair.start()
        try await pair.catchUp()
        // The standby restarts with every record; the primary now claims less as acknowledged
        // (as after a restart, before its standbys confirmed).
        try pair.restartStandby()
        #expect(pair.standby.applied == pair.primary.pipeline.log.appendedPosition)
        pair.acknowledgedCap.value = halfway
        try pair.start()
        // One heartbeat interval: the primary's acknowledged position reaches the standby.
        let heartbeat = pair.settings.heartbeatMilliseconds + 1
        try pair.run(rounds: 1, step: heartbeat)
        #expect(pair.standby.follower.acknowledged == halfway)
        let query = Query.unreadCounts(user: "bob", conversations: ["c"])
        #expect(try pair.askStandby(query).reply.errorCode == .unavailable)
        pair.acknowledgedCap.value = .max
        try pair.run(rounds: 1, step: heartbeat)
        #expect(try pair.askStandby(query).reply == Self.shared(try await pair.primary.ask(query)))
    }
}

extension ReplicationPair {
    /// The standby's answer to `query`, through the codecs, as its query endpoint gives it.
    func askStandby(_ query: Query, allowStandby: Bool = true) throws -> (reply: QueryReply, servedBy: ServedBy?) {
        let queries = StandbyQueries(
            configuration: standbyConfiguration,
            settings: settings,
            primary: nil,
            startedMonotonic: 0
        )
        let frame = query.encode(allowStandby: allowStandby)
        let reply = frame.withUnsafeBytes { queries.reply(to: [$0][...], replica: standby, now: now) }
        return try QueryReply.decodeServed(reply)
    }
}

extension QueryReply {
    /// The code of an error reply; nil for an answer.
    var errorCode: ErrorReply.Code? {
        if case .error(let error) = self { return error.code }
        return nil
    }
}

extension Sequence {
    /// The values of `transform` for each element, in order.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var values: [T] = []
        for element in self { values.append(try await transform(element)) }
        return values
    }
}
