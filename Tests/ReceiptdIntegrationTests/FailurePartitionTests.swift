import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// Failures of a replicated ordinal other than a clean SIGKILL (deploy/REPLICATION.md, sections
/// 7 and 16): a primary frozen as if partitioned, a standby that dies and comes back, and etcd
/// going away for a while. Two members, a real etcd, loopback only, every wait bounded.
@Suite(.serialized, .startsProcesses) struct FailurePartitionTests {
    /// Asks `member` for health until `check` holds; at most `seconds`.
    static func waitForHealth(
        _ member: ReceiptdProcess,
        seconds: Double = 15,
        _ what: String,
        _ check: (Health) -> Bool
    ) async throws -> Health {
        let deadline = Date().addingTimeInterval(seconds)
        var last: Health?
        while Date() < deadline {
            if let health = try? await member.health() {
                last = health
                if check(health) { return health }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw IntegrationError("\(what) not seen within \(seconds) s; last health \(String(describing: last))")
    }

    /// Reads `member`'s `/metrics` until a line starts with `sample`; at most `seconds`.
    static func waitForMetric(_ member: ReceiptdProcess, _ sample: String, seconds: Double = 10) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        var last = ""
        while Date() < deadline {
            last = (try? await HTTPProbe.get(try #require(member.httpAddress), "/metrics").body) ?? ""
            if last.split(separator: "\n").contains(where: { $0.hasPrefix(sample) }) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw IntegrationError("\(sample) not seen within \(seconds) s: \(last.suffix(3000))")
    }

    /// Section 6.5 and 7.4: the standby takes over from a frozen primary long before its lease
    /// could expire, and the old primary, resumed with its lease still alive, acknowledges nothing.
    @Test func aFrozenPrimaryAcknowledgesNothingWhenItResumesAndRejoinsAsAStandby() async throws {
        let etcd = try await EtcdProcess()
        let alpha = try await ReceiptdProcess(
            arguments: FailoverTests.arguments("alpha-0", etcd: etcd, leaseSeconds: 30)
        )
        let beta = try await ReceiptdProcess(arguments: FailoverTests.arguments("beta-0", etcd: etcd, leaseSeconds: 30))
        var factory = EventFactory()
        let batches = ReplicationShippingTests.batches(&factory, count: 100)
        #expect(try alpha.ingestPipelined(batches).allSatisfy { $0.error == nil })
        try await Self.waitForMetric(alpha, "receiptd_replication_in_sync_standbys 1")

        alpha.signal(SIGSTOP)
        // The frozen primary's lease lasts 30 s; within 15 s, only a takeover serves.
        _ = try await FailoverTests.waitUntilServing(
            beta,
            probe: factory.make(.memberJoined(conversation: "c", user: "dan"))
        )
        let promoted = try await HTTPProbe.get(try #require(beta.httpAddress), "/metrics").body
        #expect(promoted.contains(#"receiptd_replication_promotions_total{reason="takeover"} 1"#), "\(promoted)")
        let late = factory.make(.messageSent(conversation: "c", message: "late", sender: "bob", isSystem: false))
        // Sent to the frozen primary before it resumes: it finds it in its socket when it does.
        let gateway = try ZMQSocket(context: ReceiptdProcess.sharedContext, type: .dealer)
        defer { gateway.close() }
        try gateway.connect(alpha.ingestEndpoint)
        _ = try gateway.send([[], EventBatchCodec.encode([late])])
        try await Task.sleep(for: .milliseconds(200))
        alpha.signal(SIGCONT)
        // The resumed member may leave its primary role (its loop ends, its ingest socket closes)
        // before it reads the frame, which is then lost with the connection: a gateway re-sends
        // an unanswered frame with the same ids, at most twice here. Whatever answers, as the
        // old primary or as the standby it becomes, refuses it: nothing is acknowledged.
        try gateway.setReceiveTimeout(milliseconds: 5_000)
        var answer: IngestReply?
        for attempt in 0..<3 where answer == nil {
            if attempt > 0 { _ = try gateway.send([[], EventBatchCodec.encode([late])]) }
            if let reply = try gateway.receiveMultipart() { answer = try IngestReply.decode(try #require(reply.last)) }
        }
        let refused = try #require(answer, "no answer from the resumed old primary, re-sent twice")
        #expect(refused.error?.code == .notPrimary, "the resumed old primary answered \(refused)")
        #expect(refused.results.isEmpty)

        // It rejoins as a standby of the new primary, with the new primary's history. On a loaded
        // machine a later term may follow (a member stalled past the takeover time deposes beta
        // and beta wins again: a clean-clone run saw term 3); the old primary's term 1 never
        // comes back.
        let rejoined = try await Self.waitForHealth(alpha, "alpha as a standby of term 2 or later") {
            $0.role == .standby && $0.term >= 2
        }
        #expect(rejoined.member == "alpha-0")
        // A standby has no in-sync set: not the one it kept as primary (a new primary's gauge
        // would start from it, and look in sync before it recorded anyone).
        try await Self.waitForMetric(alpha, "receiptd_replication_in_sync_standbys 0")
        let primary = try await beta.health()
        _ = try await Self.waitForHealth(alpha, "alpha caught up") { $0.applied >= primary.applied }
        // The event only the old primary ever saw was never applied anywhere that counts.
        let survivor = try beta.makeClient()
        defer { _ = try? BlockingWait.run(seconds: 5) { await survivor.shutdown() } }
        await #expect(throws: ReceiptsClientError.self) {
            try await survivor.status(of: "late", in: "c", viewer: Viewer(user: "bob"))
        }
        for index in [0, 99] {
            let status = try await survivor.status(of: "m\(index)", in: "c", viewer: Viewer(user: "ann"))
            #expect(status.status.readCount == 1)
        }
    }

    @Test func aStandbyLostUnderStallStopsIngestUntilItReturns() async throws {
        let etcd = try await EtcdProcess()
        let extra = ["--replication-fallback", "stall", "--replication-timeout-ms", "500", "--compact-bytes", "4096"]
        let alpha = try await ReceiptdProcess(arguments: FailoverTests.arguments("alpha-0", etcd: etcd) + extra)
        let beta = try await ReceiptdProcess(arguments: FailoverTests.arguments("beta-0", etcd: etcd) + extra)
        var factory = EventFactory()
        #expect(
            try alpha.ingestPipelined(ReplicationShippingTests.batches(&factory, count: 50)).allSatisfy {
                $0.error == nil
            }
        )

        beta.kill9()
        try await Task.sleep(for: .milliseconds(1500))
        let refused = try alpha.ingestPipelined([[factory.make(.memberJoined(conversation: "c", user: "dan"))]])
        #expect(refused.first?.error?.code == .unavailable, "\(String(describing: refused.first))")
        #expect(try await alpha.counter("receiptd.replication.refused_frames") >= 1)

        try await beta.start()
        _ = try await FailoverTests.waitUntilServing(
            alpha,
            probe: factory.make(.memberJoined(conversation: "c", user: "eve"))
        )
        // The stalled time reaches the metric at the shipper's next sample, within a second or so.
        let deadline = Date().addingTimeInterval(5)
        var metrics = ""
        repeat {
            metrics = try await HTTPProbe.get(try #require(alpha.httpAddress), "/metrics").body
            if !metrics.contains("receiptd_replication_stalled_seconds_total 0\n") { break }
            try await Task.sleep(for: .milliseconds(200))
        } while Date() < deadline
        #expect(metrics.contains("receiptd_replication_stalled_seconds_total"))
        #expect(!metrics.contains("receiptd_replication_stalled_seconds_total 0\n"), "no stalled time counted")
    }

    @Test func aStandbyThatMissedCompactionsCatchesUpFromTheSnapshot() async throws {
        let etcd = try await EtcdProcess()
        // The primary keeps the absent standby's segments for a second only.
        let extra = ["--compact-bytes", "4096", "--replication-timeout-ms", "500", "--replication-pin-timeout-s", "1"]
        let alpha = try await ReceiptdProcess(arguments: FailoverTests.arguments("alpha-0", etcd: etcd) + extra)
        let beta = try await ReceiptdProcess(arguments: FailoverTests.arguments("beta-0", etcd: etcd) + extra)
        var factory = EventFactory()
        #expect(
            try alpha.ingestPipelined(ReplicationShippingTests.batches(&factory, count: 20)).allSatisfy {
                $0.error == nil
            }
        )
        beta.kill9()
        // Acknowledged alone (fallback local) while the standby is away, and compacted past it.
        for round in 0..<8 {
            let batches = (0..<40).map { index in
                [
                    factory.make(
                        .messageSent(conversation: "c", message: "r\(round)-\(index)", sender: "ann", isSystem: false)
                    )
                ]
            }
            #expect(try alpha.ingestPipelined(batches).allSatisfy { $0.error == nil })
            try await Task.sleep(for: .milliseconds(300))
        }
        try await beta.start()
        let primary = try await alpha.health()
        let caughtUp = try await Self.waitForHealth(beta, "beta caught up") { $0.applied >= primary.applied }
        #expect(caughtUp.role == .standby)
        #expect(
            beta.standardError().contains("installing the primary's snapshot"),
            "\(beta.standardError().suffix(3000))"
        )
    }

    @Test func whileEtcdIsAwayNothingIsLostAndNoSecondPrimaryAppears() async throws {
        let etcd = try await EtcdProcess()
        let alpha = try await ReceiptdProcess(arguments: FailoverTests.arguments("alpha-0", etcd: etcd))
        let beta = try await ReceiptdProcess(arguments: FailoverTests.arguments("beta-0", etcd: etcd))
        var factory = EventFactory()
        let batches = ReplicationShippingTests.batches(&factory, count: 50)
        #expect(try alpha.ingestPipelined(batches).allSatisfy { $0.error == nil })

        etcd.pause()
        // Past the lease's TTL without a renewal the primary acknowledges nothing; nobody else
        // can campaign without etcd.
        try await Task.sleep(for: .seconds(3))
        let during = try alpha.ingestPipelined([[factory.make(.memberJoined(conversation: "c", user: "dan"))]])
        #expect(during.first?.error?.code == .notPrimary, "\(String(describing: during.first))")
        #expect(try await beta.health().role == .standby)

        etcd.resume()
        // One member serves again; at no sample are both primary.
        let deadline = Date().addingTimeInterval(15)
        var served = false
        while Date() < deadline, !served {
            let roles = [try? await alpha.health().role, try? await beta.health().role]
            #expect(roles.filter { $0 == .primary }.count <= 1, "two primaries: \(roles)")
            served = roles.contains(.primary)
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(served, "no primary within 15 s of etcd's return")
        // The member that said primary first may be the one in office before etcd went away,
        // whose lease expired meanwhile; the next campaign decides who serves.
        let (primary, _) = try await FailoverTests.waitUntilOneServes(
            [alpha, beta],
            probe: factory.make(.memberJoined(conversation: "c", user: "eve"))
        )
        let client = try primary.makeClient()
        defer { _ = try? BlockingWait.run(seconds: 5) { await client.shutdown() } }
        for index in [0, 49] {
            let status = try await client.status(of: "m\(index)", in: "c", viewer: Viewer(user: "ann"))
            #expect(status.status.readCount == 1)
        }
        // Without a lease (etcd revoked it on its return) a campaign fails until the next grant:
        // retried at once, each member logged hundreds of failures a second and kept a core busy.
        for member in [alpha, beta] {
            let retries = member.standardError().components(separatedBy: "the campaign's outcome is unknown").count - 1
            #expect(retries <= 20, "\(member.dataDirectory): \(retries) campaigns of unknown outcome")
        }
    }
}
