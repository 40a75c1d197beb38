import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// Two receiptd members of one ordinal and a real etcd (deploy/REPLICATION.md, steps 5 to 7):
/// the member set first in `--members` takes the first term, the other follows it; when the
/// primary is SIGKILLed, the standby hears nothing from it, takes over (section 6.5) with every
/// acknowledged event; the old primary, started again, follows the new one.
@Suite(.serialized, .startsProcesses) struct FailoverTests {
    /// The flags of member `name` (`alpha-0` or `beta-0`) of ordinal 0, on `etcd`.
    static func arguments(_ name: String, etcd: EtcdProcess, leaseSeconds: Int = 2, extra: [String] = []) -> [String] {
        [
            "--etcd", etcd.clientURL, "--member", name, "--members", "alpha,beta", "--lease-ttl-s", "\(leaseSeconds)",
            "--replication-timeout-ms", "5000", "--replication-fallback", "local",
        ] + extra
    }

    /// Sends `probe` to `member`'s ingest endpoint until it is acknowledged without an error;
    /// returns how long that took. At most `seconds`.
    static func waitUntilServing(_ member: ReceiptdProcess, probe: Event, seconds: Double = 15) async throws -> Duration
    {
        try await waitUntilOneServes([member], probe: probe, seconds: seconds).took
    }

    /// Sends `probe` to each of `members`' ingest endpoints in turn until one acknowledges it
    /// without an error; returns that member and how long it took. At most `seconds`. A member
    /// that answers `primary` to a health query may still lose the next campaign (the one in
    /// office before etcd went away, say), so only an acknowledgement says who serves.
    static func waitUntilOneServes(
        _ members: [ReceiptdProcess],
        probe: Event,
        seconds: Double = 15
    ) async throws -> (member: ReceiptdProcess, took: Duration) {
        let started = ContinuousClock.now
        let deadline = Date().addingTimeInterval(seconds)
        var last: [String: String] = [:]
        while Date() < deadline {
            for member in members {
                do {
                    let reply = try member.ingestPipelined([[probe]], timeoutMilliseconds: 200).first
                    if let reply, reply.error == nil { return (member, ContinuousClock.now - started) }
                    last[member.dataDirectory] = "\(String(describing: reply))"
                } catch {
                    last[member.dataDirectory] = "\(error)"
                }
                member.resetRawIngest()
            }
            // A refusal comes back at once: a new connection every few milliseconds is enough.
            try await Task.sleep(for: .milliseconds(5))
        }
        throw IntegrationError(
            "none of \(members.map(\.dataDirectory)) acknowledged within \(seconds) s; last replies: \(last); "
                + members.map { "\($0.dataDirectory): \($0.standardError().suffix(2000))" }.joined(separator: "\n")
        )
    }

    @Test func theStandbyTakesOverASIGKILLedPrimaryWithEveryAcknowledgedEvent() async throws {
        let etcd = try await EtcdProcess()
        let alpha = try await ReceiptdProcess(arguments: Self.arguments("alpha-0", etcd: etcd))
        let beta = try await ReceiptdProcess(arguments: Self.arguments("beta-0", etcd: etcd))
        var factory = EventFactory()
        // The standby takes nothing: it names the primary, and says what it is.
        let refused = try beta.ingestPipelined([[factory.make(.memberJoined(conversation: "c", user: "eve"))]])
        #expect(refused.first?.error?.code == .notPrimary)
        #expect(refused.first?.error?.primary?.member == "alpha-0")
        #expect(refused.first?.error?.primary?.ingest == alpha.ingestEndpoint)
        #expect(refused.first?.error?.term == 1)
        let health = try await beta.health()
        #expect(health.role == .standby)
        #expect(health.member == "beta-0")
        let batches = ReplicationShippingTests.batches(&factory, count: 200)
        let replies = try alpha.ingestPipelined(batches)
        #expect(replies.allSatisfy { $0.error == nil }, "\(replies.compactMap(\.error).prefix(3))")

        alpha.kill9()
        let took = try await Self.waitUntilServing(
            beta,
            probe: factory.make(.memberJoined(conversation: "c", user: "dan"))
        )
        #expect(took < .seconds(10), "the standby served again after \(took)")
        let survivor = try beta.makeClient()
        defer { _ = try? BlockingWait.run(seconds: 5) { await survivor.shutdown() } }
        for index in [0, 100, 199] {
            let status = try await survivor.status(of: "m\(index)", in: "c", viewer: Viewer(user: "ann"))
            #expect(status.status.readCount == 1, "m\(index): \(status)")
        }
        let metrics = try await HTTPProbe.get(try #require(beta.httpAddress), "/metrics").body
        #expect(metrics.contains(#"receiptd_replication_role{role="primary"} 1"#), "\(metrics)")
        // The standby noticed the silence and took over: it did not wait for the lease.
        #expect(metrics.contains(#"receiptd_replication_promotions_total{reason="takeover"} 1"#))
        #expect(metrics.contains("receiptd_replication_term 2"))
        // Re-sent with the same ids: applied once, whoever acknowledged it first.
        let again = try beta.ingestPipelined([batches[1]])
        #expect(again.first?.results == [.duplicate, .duplicate, .duplicate])

        // The old primary comes back as a standby of the new one, and the new one goes on.
        try await alpha.start()
        let more = try beta.ingestPipelined(
            ReplicationShippingTests.batches(&factory, count: 20).dropFirst().map { $0 }
        )
        #expect(more.allSatisfy { $0.error == nil })
        #expect(alpha.isRunning)
        #expect(alpha.standardError().contains("\"following\""))
        let rejoined = try await HTTPProbe.get(try #require(alpha.httpAddress), "/metrics").body
        #expect(rejoined.contains(#"receiptd_replication_role{role="standby"} 1"#), "\(rejoined)")
        try await Self.expectExportsTheReplicationMetrics(beta, except: ["receiptd_replication_depositions_total"])
    }

    /// Checks that `member` exports every replication metric `deploy/prometheus/metrics.json`
    /// lists (what the dashboard and the alerts use), within a few seconds (the lag series come
    /// with the shipper's first sample after a standby's session opens).
    static func expectExportsTheReplicationMetrics(_ member: ReceiptdProcess, except: Set<String>) async throws {
        struct Listed: Decodable {
            struct Replication: Decodable {
                var counters: [String]
                var gauges: [String]
            }
            var replication: Replication
        }
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("deploy/prometheus/metrics.json")
        let listed = try JSONDecoder().decode(Listed.self, from: Data(contentsOf: file)).replication
        let names = Set(listed.counters + listed.gauges).subtracting(except)
        let deadline = Date().addingTimeInterval(5)
        var missing = names
        while Date() < deadline, !missing.isEmpty {
            let exported = try await HTTPProbe.get(try #require(member.httpAddress), "/metrics").body
            missing = names.filter { !exported.contains("\n\($0){") && !exported.contains("\n\($0) ") }
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(missing.isEmpty, "not exported: \(missing.sorted())")
    }
}
