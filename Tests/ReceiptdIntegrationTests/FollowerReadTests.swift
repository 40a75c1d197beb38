import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// Reads from standbys (deploy/REPLICATION.md, section 10) with two real receiptd members and a
/// real etcd: a standby answers queries that accept its answer from the state it applied, says
/// so in `served_by`, and answers `UNAVAILABLE` once cut off from its primary past
/// `--standby-max-staleness-ms`; a client preferring standbys reads there and falls back to the
/// primary when the standby refuses, is frozen or is dead.
@Suite(.serialized, .startsProcesses) struct FollowerReadTests {
    /// The staleness bound the members run with.
    static let stalenessMilliseconds = 500

    /// Members `alpha-0` (primary) and `beta-0` (standby) of ordinal 0, with 50 batches of
    /// conversation "c" acknowledged, and the standby caught up with them.
    ///
    /// A long lease and no takeover: these tests are about reads, and under the whole suite a
    /// primary stalled past the default takeover time was once deposed (term 2 where the test
    /// read 1); a frozen primary stays primary, and the standby stays a standby.
    static func members(_ etcd: EtcdProcess) async throws -> (alpha: ReceiptdProcess, beta: ReceiptdProcess) {
        let flags = [
            "--standby-max-staleness-ms", "\(stalenessMilliseconds)", "--lease-ttl-s", "20",
            "--replication-takeover-ms", "0",
        ]
        let alpha = try await ReceiptdProcess(arguments: FailoverTests.arguments("alpha-0", etcd: etcd, extra: flags))
        let beta = try await ReceiptdProcess(arguments: FailoverTests.arguments("beta-0", etcd: etcd, extra: flags))
        var factory = EventFactory()
        let replies = try alpha.ingestPipelined(ReplicationShippingTests.batches(&factory, count: 50))
        #expect(replies.allSatisfy { $0.error == nil }, "\(replies.compactMap(\.error).prefix(3))")
        let primary = try await alpha.health()
        _ = try await FailurePartitionTests.waitForHealth(beta, "the standby caught up") {
            $0.applied >= primary.applied
        }
        return (alpha, beta)
    }

    /// A client of the ordinal that prefers standbys, leaving a silent member after 1 s.
    static func client(_ alpha: ReceiptdProcess, _ beta: ReceiptdProcess) throws -> ReceiptsClient {
        var configuration = ReceiptsClient.Configuration(
            cluster: Cluster(members: [
                [
                    Cluster.Worker(dataDirectory: alpha.dataDirectory, member: "alpha-0"),
                    Cluster.Worker(dataDirectory: beta.dataDirectory, member: "beta-0"),
                ]
            ])
        )
        configuration.readFrom = .standbyPreferred
        configuration.acknowledgementTimeoutMilliseconds = 1000
        configuration.queryTimeoutMilliseconds = 8000
        return try ReceiptsClient(configuration, logger: Logger(label: "follower-read-client"))
    }

    /// One query to `member`'s query endpoint on a socket of its own, and its reply.
    static func ask(
        _ member: ReceiptdProcess,
        _ query: Query,
        allowStandby: Bool = true
    ) throws -> (reply: QueryReply, servedBy: ServedBy?) {
        let socket = try ZMQSocket(context: ReceiptdProcess.sharedContext, type: .dealer)
        defer { socket.close() }
        try socket.setLinger(milliseconds: 0)
        try socket.setReceiveTimeout(milliseconds: 5000)
        try socket.connect(member.queryEndpoint)
        _ = try socket.send([[], query.encode(allowStandby: allowStandby)])
        let frames = try #require(try socket.receiveMultipart(), "no reply from \(member.dataDirectory)")
        return try QueryReply.decodeServed(try #require(frames.last))
    }

    /// Asks `member` until its answer satisfies `check`; at most `seconds`.
    static func waitForAnswer(
        _ member: ReceiptdProcess,
        _ query: Query,
        seconds: Double = 10,
        _ what: String,
        _ check: (QueryReply, ServedBy?) -> Bool
    ) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        var last: (QueryReply, ServedBy?)?
        while Date() < deadline {
            let answer = try ask(member, query)
            last = answer
            if check(answer.reply, answer.servedBy) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw IntegrationError("\(what) not seen within \(seconds) s; last answer \(String(describing: last))")
    }

    static let status = Query.messageStatus(conversation: "c", message: "m49", viewer: Viewer(user: "ann"))

    @Test func aStandbyAnswersFollowerReadsWithServedByAndAClientReadsThere() async throws {
        let etcd = try await EtcdProcess()
        let (alpha, beta) = try await Self.members(etcd)
        // Raw: the standby's answer is the primary's, and says who served it.
        let (reply, servedBy) = try Self.ask(beta, Self.status)
        #expect(reply == (try Self.ask(alpha, Self.status).reply))
        let served = try #require(servedBy)
        #expect(served.member == "beta-0")
        #expect(served.role == .standby)
        #expect(served.term == 1)
        #expect(served.applied == (try await beta.health()).applied)
        #expect(served.behindMilliseconds < UInt64(Self.stalenessMilliseconds))
        #expect(try Self.ask(alpha, Self.status).servedBy == nil, "the primary answers as always")
        guard case .error(let error) = try Self.ask(beta, Self.status, allowStandby: false).reply else {
            Issue.record("a query that does not accept a standby was answered by one")
            return
        }
        #expect(error.code == .notPrimary)
        #expect(error.primary?.member == "alpha-0")

        // A client that prefers standbys reads every acknowledged event there.
        let client = try Self.client(alpha, beta)
        defer { _ = try? BlockingWait.run(seconds: 5) { await client.shutdown() } }
        for index in [0, 25, 49] {
            let status = try await client.status(of: "m\(index)", in: "c", viewer: Viewer(user: "ann"))
            #expect(status.status.readCount == 1, "m\(index): \(status)")
        }
        let counts = try await client.unreadCounts(for: "bob", in: ["c"])
        #expect(counts.map(\.unread) == [50])
        let statistics = client.currentStatistics
        #expect(statistics.standbyReads == 4)
        #expect(statistics.standbyFallbacks == 0)
    }

    @Test func aClientFallsBackToThePrimaryWhenItsStandbyIsFrozenOrKilled() async throws {
        let etcd = try await EtcdProcess()
        let (alpha, beta) = try await Self.members(etcd)
        let client = try Self.client(alpha, beta)
        defer { _ = try? BlockingWait.run(seconds: 5) { await client.shutdown() } }
        _ = try await client.status(of: "m0", in: "c", viewer: Viewer(user: "ann"))
        #expect(client.currentStatistics.standbyReads == 1)

        // Frozen past the staleness bound: silent, left for the primary after the timeout.
        beta.signal(SIGSTOP)
        try await Task.sleep(for: .milliseconds(Self.stalenessMilliseconds * 2))
        let frozen = try await client.status(of: "m49", in: "c", viewer: Viewer(user: "ann"))
        #expect(frozen.status.readCount == 1)
        #expect(client.currentStatistics.standbyFallbacks == 1)
        #expect(client.currentStatistics.standbyReads == 1)

        // Resumed, it hears from its primary again and serves again.
        beta.signal(SIGCONT)
        try await Self.waitForAnswer(beta, Self.status, "the resumed standby serving") { _, servedBy in
            servedBy != nil
        }
        _ = try await client.status(of: "m1", in: "c", viewer: Viewer(user: "ann"))
        #expect(client.currentStatistics.standbyReads == 2)

        // Killed: the same.
        beta.kill9()
        let killed = try await client.status(of: "m2", in: "c", viewer: Viewer(user: "ann"))
        #expect(killed.status.readCount == 1)
        #expect(client.currentStatistics.standbyFallbacks == 2)
    }

    @Test func aStandbyCutOffFromItsPrimaryAnswersUnavailableAndTheClientAsksThePrimary() async throws {
        let etcd = try await EtcdProcess()
        let (alpha, beta) = try await Self.members(etcd)
        let client = try Self.client(alpha, beta)
        defer { _ = try? BlockingWait.run(seconds: 5) { await client.shutdown() } }

        alpha.signal(SIGSTOP)
        try await Self.waitForAnswer(beta, Self.status, "UNAVAILABLE from the cut-off standby") { reply, servedBy in
            guard case .error(let error) = reply else { return false }
            return error.code == .unavailable && servedBy == nil
        }
        // The client's read is refused by the standby and goes to the primary, which answers
        // once it resumes.
        let read = Task.onOwnThread { try await client.status(of: "m49", in: "c", viewer: Viewer(user: "ann")) }
        try await Task.sleep(for: .milliseconds(300))
        alpha.signal(SIGCONT)
        let status = try await read.value
        #expect(status.status.readCount == 1)
        #expect(client.currentStatistics.standbyFallbacks >= 1)
        #expect(client.currentStatistics.standbyReads == 0)

        // Heard from again, the standby serves again.
        try await Self.waitForAnswer(beta, Self.status, "the standby serving again") { _, servedBy in servedBy != nil }
    }
}
