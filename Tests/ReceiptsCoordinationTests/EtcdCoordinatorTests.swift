import Foundation
import ReceiptsCoordination
import ReceiptsReplication
import ReceiptsTestTraits
import Testing

/// What only the etcd coordinator does: the lease file, and its lifecycle's refusals.
@Suite(.timeLimit(.minutes(1)), .ownThread)
struct EtcdCoordinatorTests {
    /// Runs `body` on a fresh etcd, tearing it down however `body` ends.
    static func withEtcd(_ body: (EtcdHarness) async throws -> Void) async throws {
        let harness = try await EtcdHarness()
        do {
            try await body(harness)
        } catch {
            await harness.tearDown()
            throw error
        }
        await harness.tearDown()
    }

    @Test func aRestartedMemberRevokesTheLeaseItsPreviousRunLeft() async throws {
        try await Self.withEtcd { harness in
            // A 10 s lease: without the revocation the key would outlive the test's checks.
            let crashed = try harness.etcdCoordinator(member: "receiptd-3", ttlSeconds: 10)
            try await crashed.start()
            let outcome = try await CoordinatorConformanceTests.campaign(crashed, "receiptd-3", term: 1)
            guard case .won = outcome else {
                Issue.record("the campaign lost: \(outcome)")
                return
            }
            crashed.suspendRenewals()
            let recorded = try String(contentsOfFile: harness.leaseFilePath(of: "receiptd-3"), encoding: .utf8)

            let restarted = try harness.etcdCoordinator(member: "receiptd-3", ttlSeconds: 10)
            try await restarted.start()
            #expect(try await restarted.state().primary == nil)
            let now = try String(contentsOfFile: harness.leaseFilePath(of: "receiptd-3"), encoding: .utf8)
            #expect(now != recorded)
            guard case .won = try await CoordinatorConformanceTests.campaign(restarted, "receiptd-3", term: 2) else {
                Issue.record("the restarted member's campaign lost")
                return
            }
        }
    }

    /// A lease revoked on etcd (as etcd does to one that expired while it was paused) is
    /// replaced as soon as a keepalive finds it gone, not a renewal round later: until then the
    /// member cannot campaign. Before, the coordinator held no lease for a whole round (2 s here).
    @Test func aLeaseFoundGoneIsReplacedAtOnce() async throws {
        try await Self.withEtcd { harness in
            let coordinator = try harness.etcdCoordinator(member: "receiptd-3", ttlSeconds: 6)
            try await coordinator.start()
            let revoked = coordinator.lease
            try await harness.endLease(of: "receiptd-3")
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(8)
            var lostAt: ContinuousClock.Instant?
            var held = revoked
            while clock.now < deadline {
                held = coordinator.lease
                if held == 0, lostAt == nil { lostAt = clock.now }
                if held != 0, held != revoked { break }
                try await Task.sleep(for: .milliseconds(5))
            }
            #expect(held != 0 && held != revoked, "no new lease within 8 s")
            let withoutLease = lostAt.map { clock.now - $0 } ?? .zero
            // A grant is one etcd write (an fsync): room for a loaded machine, half a round.
            #expect(withoutLease < .seconds(1), "held no lease for \(withoutLease)")
        }
    }

    @Test func closeForgetsTheRevokedLease() async throws {
        try await Self.withEtcd { harness in
            let coordinator = try harness.etcdCoordinator(member: "receiptd-3")
            try await coordinator.start()
            #expect(FileManager.default.fileExists(atPath: harness.leaseFilePath(of: "receiptd-3")))
            await coordinator.close()
            #expect(!FileManager.default.fileExists(atPath: harness.leaseFilePath(of: "receiptd-3")))
            await #expect(throws: CoordinationError.self) { try await coordinator.start() }
        }
    }

    @Test func aSecondStartIsRefused() async throws {
        try await Self.withEtcd { harness in
            let coordinator = try harness.etcdCoordinator(member: "receiptd-3")
            try await coordinator.start()
            await #expect { try await coordinator.start() } throws: { error in
                (error as? CoordinationError)?.message.contains("started or closed before") == true
            }
        }
    }

    @Test func aFailedCallNamesTheCallAndTheEndpoint() async throws {
        try await Self.withEtcd { harness in
            let coordinator = try harness.etcdCoordinator(member: "receiptd-3")
            harness.etcd.kill()
            await #expect { try await coordinator.start() } throws: { error in
                let message = (error as? CoordinationError)?.message ?? ""
                return message.contains("lease grant") && message.contains("\(harness.etcd.clientURL)/v3/lease/grant")
            }
            // A start that failed may be tried again once etcd is back.
            try await harness.etcd.restart()
            try await coordinator.start()
            #expect(coordinator.leaseDeadline > 0)
        }
    }
}
