import Foundation
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsTestTraits
import ReceiptsWire
import Testing

/// `receiptctl rebalance --members` on replicated ordinals (deploy/REPLICATION.md, section 11):
/// ordinal 0 (members `alpha-0`, primary, and `beta-0`) scales out to two ordinals while a
/// gateway streams events; the driver sends every step to each ordinal's primary. Killing
/// ordinal 0's primary in the middle of the move is, to the driver, a sender that restarted
/// (deploy/SCALING.md, "When a worker dies mid-move"): its standby takes over with every step
/// that was answered, and the move completes.
@Suite(.serialized, .startsProcesses)
struct ReplicatedRebalanceTests {
    /// The member sets, in preference order: `alpha-k` takes ordinal k's first term.
    static let memberSets = ["alpha", "beta"]

    /// The scale-out, with the driver given the member sets in the other order (it asks the
    /// standbys first and follows their `NOT_PRIMARY`), or with the sender's primary SIGKILLed
    /// once it released two conversations.
    @Test(arguments: [false, true])
    func aScaleOutUnderLoadEndsWithOneOwnerAndExactState(killingTheSendersPrimary: Bool) async throws {
        let etcd = try await EtcdProcess()
        let parent = try TemporaryDirectory.make(prefix: "rdrr")
        defer { try? FileManager.default.removeItem(atPath: parent) }
        // Member `<set>-<k>` keeps its data, and so its ipc endpoints, in `<parent>/<set>-<k>`.
        let templates = WorkerEndpoints(dataDirectory: "\(parent)/{member}-{index}")
        func start(_ name: String, ordinal: Int) async throws -> ReceiptdProcess {
            let directory = "\(parent)/\(name)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return try await ReceiptdProcess(
                dataDirectory: directory,
                arguments: FailoverTests.arguments(
                    name,
                    etcd: etcd,
                    extra: ["--worker-index", "\(ordinal)", "--worker-count", "1"]
                )
            )
        }
        func client(routingCount: Int) throws -> ReceiptsClient {
            var configuration = ReceiptsClient.Configuration(
                cluster: Cluster(
                    workerCount: routingCount,
                    members: Self.memberSets,
                    ingest: templates.ingest,
                    query: templates.query,
                    publish: templates.publish
                )
            )
            configuration.acknowledgementTimeoutMilliseconds = 500
            configuration.queryTimeoutMilliseconds = 5000
            return try ReceiptsClient(configuration, logger: Logger(label: "test-client"))
        }

        let alpha0 = try await start("alpha-0", ordinal: 0)
        let members = [
            alpha0, try await start("beta-0", ordinal: 0), try await start("alpha-1", ordinal: 1),
            try await start("beta-1", ordinal: 1),
        ]
        let old = try client(routingCount: 1)
        let updated = try client(routingCount: 2)
        let stream = try await LoadStream.start([old, updated], rounds: 3)

        let driver = try RebalanceProcess.start(
            to: 2,
            template: templates.query,
            arguments: [
                "--members",
                (killingTheSendersPrimary ? Self.memberSets : Self.memberSets.reversed()).joined(separator: ","),
                "--batch", "1", "--pause-ms", "20", "--verbose",
            ]
        )
        let probe = try client(routingCount: 2)
        if killingTheSendersPrimary {
            let before = try await ScaleOutTests.topology(of: 0, probe) { $0.released >= 2 }
            try #require(before.released >= 2 && before.targetCount == 2, "not in the middle of the move: \(before)")
            // beta-0 takes over once alpha-0's lease (2 s) expires; the driver waits for it.
            alpha0.kill9()
        }
        let finished = try await driver.wait(seconds: 120)
        #expect(finished.status == 0, "\(finished.output)")
        #expect(finished.output.contains("worker 1: primary alpha-1 (term 1)"), "\(finished.output)")
        if killingTheSendersPrimary {
            #expect(finished.output.contains("got no answer from alpha-0"), "\(finished.output)")
            #expect(try await members[1].health().role == .primary)
            // The old primary comes back as a standby of the new one.
            try await alpha0.start()
        } else {
            #expect(finished.output.contains("worker 0: primary alpha-0 (term 1)"), "\(finished.output)")
            #expect(finished.output.contains("worker 0: beta-0 is not the primary"), "\(finished.output)")
        }
        await probe.shutdown()

        let sent = try await stream.finish(rounds: 3)
        try await Self.expectOneOwnerAndUnmovedState(client(routingCount: 2), to: 2, sent: sent)
        // Every member, standbys included, applied the commit: the move is in the replicated logs.
        for member in members {
            #expect(try await Self.workerCount(of: member, reaching: 2) == 2, "\(member.dataDirectory)")
        }
        await old.shutdown()
        await updated.shutdown()
        for member in members { member.kill9() }
        etcd.stop()
    }

    /// `--members` goes with `{member}` in the template, and names distinct member sets: the
    /// driver refuses anything else before it asks any worker.
    @Test(arguments: [
        ("ipc:///tmp/rdrr-none/{index}", ["--members", "alpha,beta"], "{member} exactly when --members"),
        ("ipc:///tmp/rdrr-none/{member}-{index}", [], "{member} exactly when --members"),
        ("ipc:///tmp/rdrr-none/{member}-{index}", ["--members", "alpha,,beta"], "distinct, non-empty"),
        ("ipc:///tmp/rdrr-none/{member}-{index}", ["--members", "alpha,alpha"], "distinct, non-empty"),
    ])
    func theDriverRefusesBadMembers(template: String, arguments: [String], refusal: String) async throws {
        let refused = try await RebalanceProcess.run(to: 2, template: template, arguments: arguments)
        #expect(refused.status != 0 && refused.output.contains(refusal), "\(refused.output)")
    }

    /// A member's worker count once it reaches `count` (asked every 50 ms, 10 s at most; the
    /// last answer either way).
    static func workerCount(of member: ReceiptdProcess, reaching count: Int) async throws -> Int {
        var health = try await member.health()
        for _ in 0..<200 where health.workerCount != count {
            try await Task.sleep(for: .milliseconds(50))
            health = try await member.health()
        }
        return health.workerCount
    }

    /// Every conversation is served by exactly its owner under `to` ordinals (asked through
    /// `client`, which follows each ordinal's primary), and reads the same as on a single worker
    /// that got the same events. (ScaleOutTests' check, for a cluster of replicated ordinals.)
    static func expectOneOwnerAndUnmovedState(_ client: ReceiptsClient, to: Int, sent: LoadStream.Sent) async throws {
        let reference = try await ReceiptdProcess()
        for round in [LoadStream.setUpEvents] + sent.byRound {
            let outcomes = try await reference.client.send(round)
            #expect(outcomes.allSatisfy { if case .accepted = $0 { true } else { false } })
        }
        for conversation in ScaleOutTests.conversations {
            var serving: [Int] = []
            for worker in 0..<to {
                let reply = try await client.query(.snapshot(conversation: conversation, limit: 0), worker: worker)
                if case .snapshot = reply { serving.append(worker) }
            }
            #expect(serving == [Partitioning.owner(of: conversation, workerCount: to)], "\(conversation)")
            #expect(
                try await ScaleOutTests.view(of: conversation, client, messages: sent.rounds)
                    == ScaleOutTests.view(of: conversation, reference.client, messages: sent.rounds),
                "\(conversation)"
            )
        }
        await client.shutdown()
    }
}
