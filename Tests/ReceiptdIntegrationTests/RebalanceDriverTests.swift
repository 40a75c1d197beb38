import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import Testing

/// `receiptctl rebalance` as an operator runs it, against real workers: a worker restarted
/// under a question, output to a file, a second driver at once.
@Suite(.serialized, .startsProcesses)
struct RebalanceDriverTests {
    /// `count` conversation ids that move from `sender` to `receiver` when `from` workers
    /// become `to`.
    static func conversations(moving sender: Int, to receiver: Int, from: Int, _ to: Int, count: Int) -> [String] {
        Array(
            (0..<10_000).lazy.map { "drv-\($0)" }
                .filter {
                    Partitioning.owner(of: $0, workerCount: from) == sender
                        && Partitioning.owner(of: $0, workerCount: to) == receiver
                }
                .prefix(count)
        )
    }

    /// Creates group conversations through `client`.
    static func create(_ conversations: [String], _ client: ReceiptsClient) async throws {
        let outcomes = try await client.send(
            conversations.map { .conversationUpserted(conversation: $0, kind: .group, members: ["u1", "u2"]) }
        )
        #expect(outcomes.allSatisfy { $0 == .accepted(held: false) }, "\(outcomes)")
    }

    /// The zguide's Lazy Pirate: a question whose connection dropped is asked again on a new
    /// socket at once, not after `--timeout-ms` (10 s by default). Worker 0 is stopped while the
    /// driver is between its batches (its next question, at most 0.4 s later, lands in a
    /// stopped process), killed 0.5 s later and restarted: the driver must carry on within 2 s
    /// of the restart. Eight batches 0.4 s apart: on a loaded machine the move must not end
    /// before the test has stopped the worker in the middle of it.
    @Test func aSenderRestartedUnderAQuestionIsAskedAgainAtOnce() async throws {
        let workers = try await WorkerCluster(count: 2, slots: 3, inOneDirectory: true)
        let client = try workers.client(routingCount: 2)
        try await Self.create(Self.conversations(moving: 0, to: 2, from: 2, 3, count: 40), client)
        await client.shutdown()

        let driver = try RebalanceProcess.start(
            to: 3,
            template: workers.endpointTemplates.query,
            arguments: ["--batch", "5", "--pause-ms", "400", "--verbose"],
            timeoutMilliseconds: nil
        )
        let probe = try workers.client(routingCount: 3)
        let before = try await ScaleOutTests.topology(of: 0, probe) { $0.released >= 5 }
        try #require(before.released >= 5 && before.released < 40, "not in the middle of the move: \(before)")
        workers.workers[0].signal(SIGSTOP)
        try await Task.sleep(for: .milliseconds(500))
        workers.workers[0].kill9()
        try await workers.workers[0].start()
        let restarted = ContinuousClock.now

        let after = try await ScaleOutTests.topology(of: 0, probe) { $0.released > before.released }
        let stall = ContinuousClock.now - restarted
        #expect(
            after.released > before.released && stall < .seconds(2),
            "worker 0 released nothing more for \(stall) after its restart: \(after), before \(before)"
        )
        let finished = try await driver.wait(seconds: 60)
        #expect(finished.status == 0, "\(finished.output)")
        #expect(finished.output.contains("got no answer (the connection dropped)"), "\(finished.output)")
        await probe.shutdown()
    }

    /// Output to a file is written line by line: a driver killed in the middle of a move (a
    /// Kubernetes Job's pod) leaves the lines it printed.
    @Test func aKilledDriverLeavesItsProgressInItsOutputFile() async throws {
        let workers = try await WorkerCluster(count: 1, slots: 2, inOneDirectory: true)
        let client = try workers.client(routingCount: 2)
        try await Self.create(Self.conversations(moving: 0, to: 1, from: 1, 2, count: 8), client)

        let driver = try RebalanceProcess.start(
            to: 2,
            template: workers.endpointTemplates.query,
            arguments: ["--batch", "1", "--pause-ms", "300", "--verbose"]
        )
        defer { try? FileManager.default.removeItem(atPath: driver.outputPath) }
        // The second import comes after the first batch's line.
        let report = try await ScaleOutTests.topology(of: 1, client) { $0.imported >= 2 }
        try #require(report.imported >= 2 && report.targetCount == 2, "not in the middle of the move: \(report)")
        driver.kill()
        let output = driver.output
        #expect(output.contains("moving from 1 to 2 workers under epoch"), "\(output)")
        #expect(output.contains("worker 0 -> 1: 1 moved"), "\(output)")
        await client.shutdown()
    }

    /// Two drivers started at once: exactly one moves the workers, the other stops with a
    /// clear error, and the move ends as one driver's would.
    @Test func twoDriversStartedTogetherOnlyOneProceeds() async throws {
        let workers = try await WorkerCluster(count: 1, slots: 2, inOneDirectory: true)
        let client = try workers.client(routingCount: 2)
        try await Self.create(Self.conversations(moving: 0, to: 1, from: 1, 2, count: 10), client)

        let drivers = try (0..<2).map { _ in
            try RebalanceProcess.start(
                to: 2,
                template: workers.endpointTemplates.query,
                arguments: ["--batch", "1", "--pause-ms", "50"]
            )
        }
        var finished: [RebalanceProcess.Finished] = []
        for driver in drivers { finished.append(try await driver.wait(seconds: 120)) }
        let outputs = finished.map(\.output).joined(separator: "\n---\n")
        #expect(finished.filter { $0.status == 0 }.count == 1, "\(outputs)")
        #expect(
            finished.contains { $0.status != 0 && $0.output.contains("another driver") },
            "no clear refusal: \(outputs)"
        )
        // Refused by worker 0 (both started a move), or by the driver itself (it found the
        // other's move under way and saw it advance).
        if finished.contains(where: { $0.output.contains("refused prepare") }) {
            #expect(try await workers.workers[0].counter("receiptd.moves.refused", label: "move_under_way") == 1)
        }
        try await Self.expectMoved(workers, to: 2, client)
        await client.shutdown()
    }

    /// A driver started while another one moves the workers stops, and the first one finishes.
    @Test func aDriverStartedInTheMiddleOfAnotherOnesMoveStops() async throws {
        let workers = try await WorkerCluster(count: 1, slots: 2, inOneDirectory: true)
        let client = try workers.client(routingCount: 2)
        try await Self.create(Self.conversations(moving: 0, to: 1, from: 1, 2, count: 20), client)
        let template = workers.endpointTemplates.query

        let first = try RebalanceProcess.start(
            to: 2,
            template: template,
            arguments: ["--batch", "1", "--pause-ms", "100"]
        )
        let report = try await ScaleOutTests.topology(of: 1, client) { $0.imported >= 2 }
        try #require(report.imported >= 2 && report.imported < 20, "not in the middle of the move: \(report)")
        let second = try await RebalanceProcess.run(to: 2, template: template, arguments: [])
        #expect(second.status != 0 && second.output.contains("another driver"), "\(second.output)")
        let finished = try await first.wait(seconds: 120)
        #expect(finished.status == 0, "\(finished.output)")
        try await Self.expectMoved(workers, to: 2, client)
        await client.shutdown()
    }

    /// Every worker committed `to` and holds nothing frozen or released.
    static func expectMoved(_ workers: WorkerCluster, to: Int, _ client: ReceiptsClient) async throws {
        for worker in workers.workers.indices {
            let report = try await ScaleOutTests.topology(of: worker, client)
            #expect(
                report.workerCount == to && report.targetCount == nil && report.frozen == 0 && report.released == 0,
                "worker \(worker): \(report)"
            )
        }
    }
}
