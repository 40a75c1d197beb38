import Foundation
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// The operator's side of replication with real processes and a real etcd (deploy/REPLICATION.md,
/// sections 6.3 and 12.2): `receiptctl demote` and SIGTERM hand the ordinal over to the standby
/// without waiting for the lease's TTL, with every acknowledged event kept; `receiptctl
/// replication status` and `/readyz` say each member's role.
@Suite(.serialized, .startsProcesses) struct SwitchoverTests {
    /// A primary (`alpha-0`, which takes term 1) and a standby (`beta-0`) that caught up with it
    /// after 200 acknowledged batches, and the events' factory.
    struct Pair {
        var etcd: EtcdProcess
        var alpha: ReceiptdProcess
        var beta: ReceiptdProcess
        var factory = EventFactory()
    }

    /// The members' lease TTL: a failover by its expiry would take longer than this, and a
    /// hand-over must take half of it at most, even on a machine busy with the whole suite (a
    /// 2 s TTL left a demote measured at 2.27 s there, receiptctl's own start-up included).
    static let leaseSeconds = 6

    static func startPair() async throws -> Pair {
        let etcd = try await EtcdProcess()
        let alpha = try await ReceiptdProcess(
            arguments: FailoverTests.arguments("alpha-0", etcd: etcd, leaseSeconds: leaseSeconds)
        )
        let beta = try await ReceiptdProcess(
            arguments: FailoverTests.arguments("beta-0", etcd: etcd, leaseSeconds: leaseSeconds)
        )
        var pair = Pair(etcd: etcd, alpha: alpha, beta: beta)
        let replies = try alpha.ingestPipelined(ReplicationShippingTests.batches(&pair.factory, count: 200))
        #expect(replies.allSatisfy { $0.error == nil }, "\(replies.compactMap(\.error).prefix(3))")
        // The standby holds the whole log once its applied position is the primary's.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if try await beta.health().applied == alpha.health().applied { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        return pair
    }

    /// Runs receiptctl with `arguments`; returns its exit status and output.
    static func receiptctl(
        _ arguments: [String],
        outputIn directory: String
    ) async throws -> (
        status: Int32, output: String
    ) {
        let process = Process()
        process.executableURL = ReceiptdLauncher.binaryDirectory.appendingPathComponent("receiptctl")
        process.arguments = arguments
        return try await process.runToEnd(outputPath: "\(directory)/receiptctl.out", seconds: 30)
    }

    /// `--query` for each member.
    static func queries(_ members: ReceiptdProcess...) -> [String] {
        members.flatMap { ["--query", $0.queryEndpoint] }
    }

    /// Checks that events the old primary acknowledged are on `member`.
    static func expectAcknowledgedEvents(on member: ReceiptdProcess) async throws {
        for index in [0, 100, 199] {
            let status = try await member.status("c", "m\(index)", viewer: Viewer(user: "ann"))
            #expect(status.status.readCount == 1, "m\(index): \(status)")
        }
    }

    @Test func demoteMovesThePrimaryToTheStandbyWellUnderTheLeaseTTL() async throws {
        var pair = try await Self.startPair()
        let (alpha, beta) = (pair.alpha, pair.beta)
        // The standby joins the in-sync set (recorded in etcd) right after it catches up.
        var run: (status: Int32, output: String) = (1, "")
        var took = Duration.zero
        for _ in 0..<20 {
            let started = ContinuousClock.now
            run = try await Self.receiptctl(
                ["demote", "--to", "beta-0"] + Self.queries(alpha, beta),
                outputIn: alpha.dataDirectory
            )
            took = ContinuousClock.now - started
            if run.status == 0 || !run.output.contains("no standby is in sync") { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("alpha-0 handed the ordinal over to beta-0 (term 1 ended)"), "\(run.output)")
        #expect(run.output.contains("beta-0 is primary of term 2"), "\(run.output)")
        // A failover by the lease's expiry takes longer than the TTL; the whole command, half of it.
        #expect(took < .seconds(Self.leaseSeconds) / 2, "receiptctl demote took \(took)")
        let serving = try await FailoverTests.waitUntilServing(
            beta,
            probe: pair.factory.make(.memberJoined(conversation: "c", user: "dan")),
            seconds: 5
        )
        #expect(serving < .seconds(1), "the new primary served after \(serving)")
        try await Self.expectAcknowledgedEvents(on: beta)
        #expect(try await alpha.health().role == .standby)
        #expect(alpha.standardError().contains("handed the ordinal over"))
        // The old primary refuses ingest, naming the new one.
        let refused = try alpha.ingestPipelined([[pair.factory.make(.memberJoined(conversation: "c", user: "eve"))]])
        #expect(refused.first?.error?.code == .notPrimary)
        #expect(refused.first?.error?.primary?.member == "beta-0")
        _ = pair.etcd
    }

    @Test func demoteToAMemberOutsideTheInSyncSetIsRefusedAndIngestGoesOn() async throws {
        var pair = try await Self.startPair()
        let run = try await Self.receiptctl(
            ["demote", "--to", "gamma-0"] + Self.queries(pair.alpha, pair.beta),
            outputIn: pair.alpha.dataDirectory
        )
        #expect(run.status != 0)
        #expect(run.output.contains("gamma-0 is not in the in-sync set"), "\(run.output)")
        let replies = try pair.alpha.ingestPipelined([
            [pair.factory.make(.memberJoined(conversation: "c", user: "eve"))]
        ])
        #expect(replies.first?.error == nil)
        #expect(try await pair.alpha.health().role == .primary)
    }

    /// The hand-over's calls to etcd run beside the worker's loop: with etcd frozen, a demote
    /// waits for it, and meanwhile health and status queries are answered at once; the demote is
    /// answered once etcd answers (here after it resumes), and the ordinal keeps serving.
    @Test func aDemoteWaitingForAFrozenEtcdHoldsNoOtherQuery() async throws {
        var pair = try await Self.startPair()
        let alpha = pair.alpha
        let demoter = try ReadStateWireTests.requester(alpha)
        defer { demoter.close() }
        try demoter.setReceiveTimeout(milliseconds: 20_000)
        pair.etcd.pause()
        _ = try demoter.send([Query.demote(to: "").encode()])
        // Give the demote time to reach the loop and its read of the keys to start.
        try await Task.sleep(for: .milliseconds(300))
        var slowest = Duration.zero
        for _ in 0..<5 {
            let started = ContinuousClock.now
            _ = try await alpha.health()
            _ = try await alpha.status("c", "m0", viewer: Viewer(user: "ann"))
            slowest = max(slowest, ContinuousClock.now - started)
            try await Task.sleep(for: .milliseconds(100))
        }
        pair.etcd.resume()
        // Before, the worker's thread waited for etcd's answer (up to the lease TTL) and every
        // query with it.
        #expect(slowest < .seconds(1), "a health and a status query took \(slowest) while the demote waited")
        guard let reply = try demoter.receiveMultipart(), let body = reply.last else {
            Issue.record("the demote was never answered")
            return
        }
        switch try QueryReply.decode(body) {
        case .handOver, .error: break
        case let other: Issue.record("the demote was answered \(other)")
        }
        _ = try await FailoverTests.waitUntilOneServes(
            [alpha, pair.beta],
            probe: pair.factory.make(.memberJoined(conversation: "c", user: "dan")),
            seconds: 20
        )
    }

    @Test func sigtermOfThePrimaryHandsOverBeforeDraining() async throws {
        var pair = try await Self.startPair()
        let (alpha, beta) = (pair.alpha, pair.beta)
        // Time for the standby to join the recorded in-sync set (without one, SIGTERM drains and
        // resigns without a hand-over).
        try await Task.sleep(for: .milliseconds(500))
        let started = ContinuousClock.now
        let status = try await alpha.terminate()
        #expect(status == 0)
        let serving = try await FailoverTests.waitUntilServing(
            beta,
            probe: pair.factory.make(.memberJoined(conversation: "c", user: "dan")),
            seconds: 5
        )
        let took = ContinuousClock.now - started
        #expect(
            took < .seconds(Self.leaseSeconds) / 2,
            "the standby served \(took) after the SIGTERM (the TTL is \(Self.leaseSeconds) s)"
        )
        #expect(serving < .seconds(1))
        #expect(alpha.standardError().contains("handed the ordinal over"), "\(alpha.standardError().suffix(3000))")
        try await Self.expectAcknowledgedEvents(on: beta)

        // Started again at once, the old primary follows the new one instead of campaigning.
        try await alpha.start()
        #expect(try await alpha.health().role == .standby)
        let health = try await beta.health()
        #expect(health.role == .primary)
        #expect(health.term == 2)
    }

    @Test func replicationStatusAndReadyzSayEachMembersRole() async throws {
        let pair = try await Self.startPair()
        let (alpha, beta) = (pair.alpha, pair.beta)
        let run = try await Self.receiptctl(
            ["replication", "status"] + Self.queries(alpha, beta),
            outputIn: alpha.dataDirectory
        )
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("alpha-0\tprimary\t1\t"), "\(run.output)")
        #expect(run.output.contains("beta-0\tstandby\t1\t"), "\(run.output)")

        let primary = try await HTTPProbe.get(try #require(alpha.httpAddress), "/readyz")
        #expect(primary.status == 200)
        #expect(primary.body.contains(#""role":"primary""#), "\(primary.body)")
        let standby = try await HTTPProbe.get(try #require(beta.httpAddress), "/readyz")
        #expect(standby.status == 200)
        #expect(standby.body.contains(#""role":"standby""#), "\(standby.body)")
        _ = pair.etcd
    }
}
