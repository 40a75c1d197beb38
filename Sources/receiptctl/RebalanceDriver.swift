import Foundation
import ReceiptsClient
import ReceiptsWire

/// The steps of a worker count change, driven from outside the workers: prepare everywhere,
/// then per (sender, receiver) export, import, release until nothing is left, then commit
/// everywhere.
///
/// It holds no state of its own: each run starts from what the workers report, and every
/// step is idempotent on the worker, so a step whose answer was lost (a worker or this driver
/// died) is simply taken again. It blocks (in `zmq_poll` and between batches): run it on a
/// thread of its own, never on Swift's cooperative pool.
///
/// With replicated ordinals (deploy/REPLICATION.md, section 11) every step goes to the
/// ordinal's primary: the driver waits until each ordinal involved has one, and follows
/// `NOT_PRIMARY` answers. A failover in the middle of the move is, to the driver, a worker that
/// restarted: the new primary has every step that was answered (steps are replicated like any
/// record), and a step whose answer was lost is asked again.
struct RebalanceDriver {
    let queries: LazyPirate
    /// How long to wait for one reply before asking again.
    let timeout: Duration
    let deadline: ContinuousClock.Instant
    let verbose: Bool

    /// Pause between tries of a step that got no answer.
    static let retryPause = Duration.milliseconds(200)

    /// The client's rule for `NOT_PRIMARY`, with one switch between pauses (only its
    /// `NOT_PRIMARY` decision is asked: the driver has no NOT_OWNER to follow).
    static let routing = RoutingPolicy(
        maxRedirects: 0,
        unavailableBackoffMilliseconds: Int(retryPause / .milliseconds(1)),
        movingBackoffMilliseconds: Int(retryPause / .milliseconds(1)),
        maxPrimarySwitches: 1
    )
    /// How long a move found under way must stand still before this driver resumes it: its
    /// own driver, if alive, takes a step sooner (or within twice `--pause-ms`).
    static let quietBeforeResuming = Duration.seconds(2)
    /// A new move's epoch is the highest the workers report plus a random step up to this, so
    /// that two drivers starting a move at once carry different epochs and each worker takes
    /// only the first (the other is refused `move_under_way`).
    static let epochSpread: UInt64 = 1 << 20

    /// Moves the cluster to `target` workers, `batch` conversations at a time with `pause`
    /// after each batch.
    func run(to target: Int, batch: Int, pause: Duration) throws {
        // Worker 0 exists under every count: it tells how many workers there are now.
        let first = try topology(of: 0)
        let involved = 0..<max(first.workerCount, target, first.targetCount ?? 0)
        try waitForPrimaries(involved)
        var reports = [first]
        for worker in involved.dropFirst() {
            reports.append(try topology(of: worker))
        }
        let (epoch, from, movesDone) = try Self.plan(
            reports,
            target: target,
            epochStep: UInt64.random(in: 1...Self.epochSpread)
        )
        if from == target {
            print("every worker already serves \(target) workers (epoch \(epoch))")
            return
        }
        if reports.contains(where: { $0.targetCount != nil }) && !movesDone {
            try expectNoOtherDriver(reports, quiet: max(Self.quietBeforeResuming, pause * 2))
        }
        let everyone = 0..<max(from, target)
        print("moving from \(from) to \(target) workers under epoch \(epoch)")
        for worker in everyone {
            _ = try ask(.prepareMove(epoch: epoch, from: from, to: target), worker: worker, "prepare")
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
                    moved += try move(from: sender, to: receiver, epoch: epoch, batch: batch, pause: pause)
                }
            }
        }
        // Highest ordinal first: worker 0, which a resumed driver asks first, reports the move
        // as under way until every other worker committed it.
        for worker in everyone.reversed() {
            _ = try ask(.commitMove(epoch: epoch), worker: worker, "commit")
        }
        print("moved \(moved) conversations; every worker serves \(target) workers (epoch \(epoch))")
    }

    /// Which move to drive, from what the workers report: the one under way to `target`, or a
    /// new one whose epoch is `epochStep` above the highest reported; `movesDone` when a worker
    /// committed it already (the driver commits only after every conversation moved), so only
    /// the commits are left.
    static func plan(
        _ reports: [TopologyReport],
        target: Int,
        epochStep: UInt64
    ) throws -> (epoch: UInt64, from: Int, movesDone: Bool) {
        let epoch = reports.map(\.moveEpoch).max() ?? 0
        if let underWay = reports.first(where: { $0.targetCount != nil }) {
            guard underWay.targetCount == target else {
                throw CtlError(
                    "worker \(underWay.workerIndex) is moving to \(underWay.targetCount ?? 0) workers "
                        + "(epoch \(underWay.moveEpoch)): finish that move first (--to \(underWay.targetCount ?? 0))"
                )
            }
            let from = reports.first { $0.targetCount != nil && $0.moveEpoch == underWay.moveEpoch }?.workerCount ?? 0
            let committed = reports.contains {
                $0.moveEpoch == underWay.moveEpoch && $0.targetCount == nil && $0.workerCount == target
            }
            return (underWay.moveEpoch, from, committed)
        }
        let counts = Set(reports.map(\.workerCount))
        guard counts.count == 1, let from = counts.first else {
            throw CtlError("the workers disagree on the worker count: \(reports.map(\.workerCount))")
        }
        return (from == target ? epoch : epoch + epochStep, from, false)
    }

    /// Stops this driver if another one is moving the workers: a move found under way is
    /// resumed only if none of its steps lands on any worker for `quiet` (its driver died).
    /// - Parameter reports: What every worker reported before.
    /// - Throws: `CtlError` if a worker's part of the move changed meanwhile.
    private func expectNoOtherDriver(_ reports: [TopologyReport], quiet: Duration) throws {
        if verbose { print("a move is under way: watching the workers for \(quiet) for another driver") }
        Self.sleep(quiet)
        for report in reports {
            let now = try topology(of: report.workerIndex)
            guard Self.moveState(of: now) == Self.moveState(of: report) else {
                throw CtlError(
                    "another driver is moving these workers: worker \(report.workerIndex) took a step of the move "
                        + "(epoch \(now.moveEpoch)) while this one watched for \(quiet); "
                        + "if that driver stops, run this again to resume its move"
                )
            }
        }
    }

    /// A worker's report without what gateways change too (new conversations are owned ones):
    /// what only a move step changes.
    private static func moveState(of report: TopologyReport) -> TopologyReport {
        var state = report
        state.owned = 0
        return state
    }

    /// Moves everything `sender` has for `receiver`; returns how many conversations moved.
    private func move(
        from sender: Int,
        to receiver: Int,
        epoch: UInt64,
        batch: Int,
        pause: Duration
    ) throws -> Int {
        var moved = 0
        while true {
            let reply = try ask(
                .exportConversations(epoch: epoch, destination: receiver, limit: batch),
                worker: sender,
                "export"
            )
            guard case .exportResult(let export) = reply else { throw unexpected(reply) }
            if !export.conversations.isEmpty {
                let imported = try ask(
                    .importConversations(epoch: epoch, sender: sender, state: export.state, last: false),
                    worker: receiver,
                    "import"
                )
                guard case .importResult = imported else { throw unexpected(imported) }
                _ = try ask(
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
            if pause > .zero { Self.sleep(pause) }
        }
        _ = try ask(
            .importConversations(epoch: epoch, sender: sender, state: [], last: true),
            worker: receiver,
            "complete"
        )
        print("worker \(sender) -> \(receiver): \(moved) conversations")
        return moved
    }

    /// Waits until every worker of `workers` has a primary: a member whose health says it is
    /// one, or an unreplicated worker (whose health names no role). A member that says it is
    /// anything else (a standby, or waiting for its role while its ordinal's first term is
    /// taken) is left for the next member in turn, asked after ``retryPause``.
    /// - Throws: `CtlError` past the deadline.
    private func waitForPrimaries(_ workers: Range<Int>) throws {
        for worker in workers {
            while true {
                let reply = try ask(.health, worker: worker, "health")
                guard case .health(let health) = reply else { throw unexpected(reply) }
                guard let role = health.role else { break }
                if role == .primary {
                    print("worker \(worker): primary \(health.member) (term \(health.term))")
                    break
                }
                if verbose { print("worker \(worker): \(health.member) is \(role.rawValue); asking the next member") }
                queries.passOver(worker)
                try pauseBeforeAskingAgain(worker, "health")
            }
        }
    }

    /// One worker's placement.
    private func topology(of worker: Int) throws -> TopologyReport {
        let reply = try ask(.topology, worker: worker, "topology")
        guard case .topology(let report) = reply else { throw unexpected(reply) }
        return report
    }

    /// Asks until an answer comes: a worker that is down, restarting or recovering is asked
    /// again every ``retryPause``, a refused step stops the driver.
    ///
    /// `NOT_PRIMARY` sends the question to the member it names, at once, as the client's
    /// ``RoutingPolicy`` decides with one switch between pauses: a member that names none (an
    /// election is under way), or a second switch, is asked again after the pause, so that two
    /// members naming each other cannot spin the driver.
    /// `UNAVAILABLE` (a worker recovering, a frozen conversation, no standby in sync) is asked
    /// again after the pause.
    private func ask(_ query: Query, worker: Int, _ step: String) throws -> QueryReply {
        var switchesSincePause = 0
        while true {
            let member = queries.member(of: worker)?.member ?? ""
            switch queries.ask(query, worker: worker, timeout: timeout) {
            case .success(.error(let error)) where error.code == .notPrimary:
                let switched = queries.follow(
                    error.primary,
                    worker: worker,
                    recentSwitches: switchesSincePause,
                    policy: Self.routing
                )
                if verbose {
                    print("worker \(worker): \(member) is not the primary (\(error.message)); asking again")
                }
                if switched {
                    switchesSincePause += 1
                    continue
                }
            case .success(.error(let error)):
                guard error.code == .unavailable else {
                    throw CtlError("worker \(worker) refused \(step): \(error.code): \(error.message)")
                }
                if verbose { print("worker \(worker): \(step) unavailable (\(error.message)); asking again") }
            case .success(let reply):
                return reply
            case .failure(let reason):
                let of = member.isEmpty ? "" : " from \(member)"
                if verbose { print("worker \(worker): \(step) got no answer\(of) (\(reason)); asking again") }
            }
            try pauseBeforeAskingAgain(worker, step)
            switchesSincePause = 0
        }
    }

    /// Sleeps ``retryPause`` before `worker` is asked `step` again.
    /// - Throws: `CtlError` past the deadline.
    private func pauseBeforeAskingAgain(_ worker: Int, _ step: String) throws {
        guard ContinuousClock.now < deadline else {
            throw CtlError("gave up waiting for worker \(worker) (\(step)); run the same command again to resume")
        }
        Self.sleep(Self.retryPause)
    }

    /// Blocks this thread (the driver's own) for `duration`.
    private static func sleep(_ duration: Duration) {
        Thread.sleep(forTimeInterval: duration / .seconds(1))
    }

    private func unexpected(_ reply: QueryReply) -> CtlError {
        CtlError("a reply of another kind: \(reply)")
    }
}
