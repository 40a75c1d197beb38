import ReceiptsClient
import ReceiptsWire

/// The steps of a worker count change, driven from outside the workers: prepare everywhere,
/// then per (sender, receiver) export, import, release until nothing is left, then commit
/// everywhere.
///
/// It holds no state of its own: each run starts from what the workers report, and every
/// step is idempotent on the worker, so a step whose answer was lost (a worker or this driver
/// died) is simply taken again.
struct RebalanceDriver {
    let client: ReceiptsClient
    /// Ordinals `0..<workers` are asked.
    let workers: Int
    let deadline: ContinuousClock.Instant
    let verbose: Bool

    /// Pause between tries of a step that got no answer.
    static let retryPause = Duration.milliseconds(200)

    /// Moves the cluster to `target` workers, `batch` conversations at a time with `pause`
    /// after each batch.
    func run(to target: Int, batch: Int, pause: Duration) async throws {
        var reports: [TopologyReport] = []
        for worker in 0..<workers { reports.append(try await topology(of: worker)) }
        let (epoch, from, movesDone) = try Self.plan(reports, target: target)
        if from == target {
            print("every worker already serves \(target) workers (epoch \(epoch))")
            return
        }
        let everyone = 0..<max(from, target)
        print("moving from \(from) to \(target) workers under epoch \(epoch)")
        for worker in everyone {
            _ = try await ask(.prepareMove(epoch: epoch, from: from, to: target), worker: worker, "prepare")
        }
        // Jump hashing: going up, conversations move only from old to new workers; going
        // down, only from the leaving workers to the others.
        let senders = from < target ? 0..<from : target..<from
        let receivers = from < target ? from..<target : 0..<target
        var moved = 0
        if movesDone {
            print("every conversation moved already; committing on the remaining workers")
        } else {
            for sender in senders {
                for receiver in receivers {
                    moved += try await move(from: sender, to: receiver, epoch: epoch, batch: batch, pause: pause)
                }
            }
        }
        // Highest ordinal first: worker 0, which a resumed driver asks first, reports the move
        // as under way until every other worker committed it.
        for worker in everyone.reversed() {
            _ = try await ask(.commitMove(epoch: epoch), worker: worker, "commit")
        }
        print("moved \(moved) conversations; every worker serves \(target) workers (epoch \(epoch))")
    }

    /// Which move to drive, from what the workers report: the one under way to `target`, or a
    /// new one with the next epoch; `movesDone` when a worker committed it already (the driver
    /// commits only after every conversation moved), so only the commits are left.
    static func plan(
        _ reports: [TopologyReport],
        target: Int
    ) throws -> (epoch: UInt64, from: Int, movesDone: Bool) {
        let epoch = reports.map(\.epoch).max() ?? 0
        if let underWay = reports.first(where: { $0.targetCount != nil }) {
            guard underWay.targetCount == target else {
                throw CtlError(
                    "worker \(underWay.workerIndex) is moving to \(underWay.targetCount ?? 0) workers "
                        + "(epoch \(underWay.epoch)): finish that move first (--to \(underWay.targetCount ?? 0))"
                )
            }
            let from = reports.first { $0.targetCount != nil && $0.epoch == underWay.epoch }?.workerCount ?? 0
            let committed = reports.contains {
                $0.epoch == underWay.epoch && $0.targetCount == nil && $0.workerCount == target
            }
            return (underWay.epoch, from, committed)
        }
        let counts = Set(reports.map(\.workerCount))
        guard counts.count == 1, let from = counts.first else {
            throw CtlError("the workers disagree on the worker count: \(reports.map(\.workerCount))")
        }
        return (from == target ? epoch : epoch + 1, from, false)
    }

    /// Moves everything `sender` has for `receiver`; returns how many conversations moved.
    private func move(
        from sender: Int,
        to receiver: Int,
        epoch: UInt64,
        batch: Int,
        pause: Duration
    ) async throws -> Int {
        var moved = 0
        while true {
            let reply = try await ask(
                .exportConversations(epoch: epoch, destination: receiver, limit: batch),
                worker: sender,
                "export"
            )
            guard case .exportResult(let export) = reply else { throw unexpected(reply) }
            if !export.conversations.isEmpty {
                let imported = try await ask(
                    .importConversations(epoch: epoch, sender: sender, state: export.state, last: false),
                    worker: receiver,
                    "import"
                )
                guard case .importResult = imported else { throw unexpected(imported) }
                _ = try await ask(
                    .releaseConversations(epoch: epoch, destination: receiver, conversations: export.conversations),
                    worker: sender,
                    "release"
                )
                moved += export.conversations.count
                if verbose {
                    print(
                        "worker \(sender) -> \(receiver): \(export.conversations.count) moved, \(export.remaining) to go"
                    )
                }
            }
            if export.remaining == 0 { break }
            if pause > .zero { try await Task.sleep(for: pause) }
        }
        _ = try await ask(
            .importConversations(epoch: epoch, sender: sender, state: [], last: true),
            worker: receiver,
            "complete"
        )
        print("worker \(sender) -> \(receiver): \(moved) conversations")
        return moved
    }

    /// One worker's placement.
    func topology(of worker: Int) async throws -> TopologyReport {
        let reply = try await ask(.topology, worker: worker, "topology")
        guard case .topology(let report) = reply else { throw unexpected(reply) }
        return report
    }

    /// Asks until an answer comes: a worker that is down or recovering is waited for, a
    /// refused step stops the driver.
    private func ask(_ query: Query, worker: Int, _ step: String) async throws -> QueryReply {
        while true {
            do {
                let reply = try await client.query(query, worker: worker)
                if case .error(let error) = reply {
                    guard error.code == .unavailable else {
                        throw CtlError("worker \(worker) refused \(step): \(error.code): \(error.message)")
                    }
                } else {
                    return reply
                }
            } catch let error as CtlError {
                throw error
            } catch {
                if verbose { print("worker \(worker): \(step) got no answer (\(error)); asking again") }
            }
            guard ContinuousClock.now < deadline else {
                throw CtlError("gave up waiting for worker \(worker) (\(step)); run the same command again to resume")
            }
            try await Task.sleep(for: Self.retryPause)
        }
    }

    private func unexpected(_ reply: QueryReply) -> CtlError {
        CtlError("a reply of another kind: \(reply)")
    }
}
