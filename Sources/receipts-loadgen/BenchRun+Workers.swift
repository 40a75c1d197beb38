import Foundation
import Synchronization

extension BenchRun {
    /// Durable batched ingest against one worker and against two (`--worker-index i
    /// --worker-count 2`, each its own data directory and endpoints), the load split by owner as
    /// a gateway splits it, the two modes interleaved run by run.
    mutating func workerScaling() throws {
        let events = count(2_000_000, smoke: 20_000)
        let options = DriveOptions(acknowledged: true, window: 4)
        // One worker, then two: the same events, each set of worker i's frames at index i.
        let modes = [1, 2].map { FrameSet.make(shape: shape, events: events, batchSize: 1000, workers: $0) }
        let results = try interleavedRuns(count: modes.count) { try driveWorkers(modes[$0], options) }
        let medians = results.map { Self.medianRun($0, by: \.eventsPerSecond) }
        let (one, two) = (medians[0], medians[1])
        table.add(
            "durable ingest, batched (1000 events/frame), 2 workers vs 1 (load split by owner)",
            ours: ResultTable.rate(two.eventsPerSecond) + " (2 workers)",
            baseline: ResultTable.rate(one.eventsPerSecond) + " (1 worker)",
            ratio: ResultTable.ratio(two.eventsPerSecond, one.eventsPerSecond),
            target: ">= 1M events/s per worker"
        )
        table.note(
            "Workers row: the batched row's workload (\(Self.count(events)) events, 1000 per frame, 4 in flight per "
                + "gateway per worker), routed by Partitioning.owner: each gateway keeps one batch per worker and "
                + "sends full frames to the worker that owns their conversations, on its own DEALER per worker. Each "
                + "worker is a receiptd with --worker-index i --worker-count n, its own data directory and ipc:// "
                + "endpoints; one load-generator thread per worker, timed from the first send of any to the last "
                + "acknowledgement of all. The modes interleaved run by run, medians of \(repeats) (all runs: 1 "
                + "worker " + Self.rates(results[0]) + "; 2 workers " + Self.rates(results[1]) + "). Median runs: "
                + one.summary(workers: 1) + "; " + two.summary(workers: 2) + ". Everything shares this machine's "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores: cores busy = (receiptd + load generator "
                + "CPU seconds) / wall seconds."
        )
    }

    /// Starts one fresh receiptd per set (ordinal `i` of `sets.count`) and drives each with its
    /// set from a thread of its own, all measured phases starting together.
    private func driveWorkers(_ sets: [FrameSet], _ options: DriveOptions) throws -> WorkersResult {
        let daemons = try sets.indices.map { index in
            try daemon(["--worker-index", "\(index)", "--worker-count", "\(sets.count)"])
        }
        defer { for daemon in daemons { daemon.terminate() } }
        let drivers = daemons.map { LoadDriver(context: context, daemon: $0) }
        let pids = daemons.map(\.processIdentifier)
        let (gateways, conversations) = (shape.gateways, shape.conversations)
        let shared = SideBySide()
        let barrier = Barrier(parties: sets.count) {
            shared.cpuAtStart.withLock {
                $0 = pids.map { Self.cpuSeconds(of: $0) } + [ClientDriver.processCPUSeconds()]
            }
        }
        let finished = DispatchGroup()
        for index in sets.indices {
            let (driver, set) = (drivers[index], sets[index])
            finished.enter()
            let thread = Thread {
                let outcome = Result {
                    try driver.drive(
                        set,
                        gateways: gateways,
                        conversations: conversations,
                        options: options,
                        beforeMeasuring: barrier.arrive
                    )
                }
                // A drive that failed before the start must not leave the others waiting.
                if case .failure = outcome { barrier.abandon() }
                shared.outcomes.withLock { $0[index] = outcome }
                finished.leave()
            }
            thread.start()
        }
        finished.wait()
        let cpuAtEnd = pids.map { Self.cpuSeconds(of: $0) } + [ClientDriver.processCPUSeconds()]
        let drives = try sets.indices.map { index in
            guard let outcome = shared.outcomes.withLock({ $0[index] }) else {
                throw LoadgenError(.process, "worker \(index)'s drive reported nothing")
            }
            return try outcome.get()
        }
        let rejected = drives.reduce(0) { $0 + $1.rejected }
        guard rejected == 0 else {
            throw LoadgenError(.protocolViolation, "\(rejected) events rejected: the load was not split by owner")
        }
        let started = drives.map(\.startedAt).min() ?? 0
        let ended = drives.map(\.finishedAt).max() ?? 0
        let cpu = zip(cpuAtEnd, shared.cpuAtStart.withLock { $0 }).map { $0 - $1 }
        return WorkersResult(
            events: drives.reduce(0) { $0 + $1.events },
            seconds: Monotonic.seconds(from: started, to: ended),
            perWorker: drives.map(\.eventsPerSecond),
            receiptdCPUSeconds: Array(cpu.dropLast()),
            loadgenCPUSeconds: cpu.last ?? 0
        )
    }

    /// Each run's events/s, in the order they ran.
    private static func rates(_ runs: [WorkersResult]) -> String {
        runs.map { ResultTable.rate($0.eventsPerSecond, "").trimmingCharacters(in: .whitespaces) }.joined(
            separator: ", "
        )
    }

    /// User + system CPU seconds a process has used (`/proc/<pid>/stat`), 0 if it is gone; with
    /// `thread`, those of its threads with that name (`/proc/<pid>/task/*/comm`).
    static func cpuSeconds(of pid: Int32, thread: String? = nil) -> Double {
        guard let thread else { return cpuSeconds(ofStat: "/proc/\(pid)/stat") }
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.reduce(0) { total, task in
            let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
            guard comm?.trimmingCharacters(in: .whitespacesAndNewlines) == thread else { return total }
            return total + cpuSeconds(ofStat: "/proc/\(pid)/task/\(task)/stat")
        }
    }

    /// User + system CPU seconds in a `/proc` stat file, 0 if it cannot be read.
    private static func cpuSeconds(ofStat path: String) -> Double {
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return 0 }
        // After "pid (comm)": state is field 3, utime field 14, stime field 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// What the drive threads of one measurement hand back.
private final class SideBySide: Sendable {
    /// CPU seconds of each receiptd, then of the load generator, when the measured phases started.
    let cpuAtStart = Mutex<[Double]>([])
    /// Each worker's drive, by ordinal.
    let outcomes = Mutex<[Int: Result<DriveResult, any Error>]>([:])
}

/// One drive of several workers side by side.
private struct WorkersResult {
    var events: Int
    var seconds: Double
    /// Each worker's own events/s over its own measured phase.
    var perWorker: [Double]
    /// CPU seconds each receiptd used during the measured phase.
    var receiptdCPUSeconds: [Double]
    /// CPU seconds the load generator used during the measured phase.
    var loadgenCPUSeconds: Double

    var eventsPerSecond: Double { Double(events) / seconds }

    /// One clause for the note: rates, CPU and events per receiptd CPU second.
    func summary(workers: Int) -> String {
        let receiptdCPU = receiptdCPUSeconds.reduce(0, +)
        let busy = (receiptdCPU + loadgenCPUSeconds) / seconds
        return "\(workers) worker\(workers == 1 ? "" : "s") "
            + ResultTable.rate(eventsPerSecond) + " in " + ResultTable.seconds(seconds) + " (per worker "
            + perWorker.map { ResultTable.rate($0) }.joined(separator: ", ") + "), receiptd CPU "
            + receiptdCPUSeconds.map { String(format: "%.2f s", $0) }.joined(separator: " + ")
            + String(format: ", load generator CPU %.2f s, %.2f cores busy, ", loadgenCPUSeconds, busy)
            + ResultTable.rate(Double(events) / max(receiptdCPU, 1e-9), "events per receiptd CPU second")
    }
}

/// Lets several threads start their measured phase together: each calls `arrive`, the last one
/// runs `action` (a reading taken at the common start) and releases them all.
private final class Barrier: Sendable {
    private let parties: Int
    private let action: @Sendable () -> Void
    private let state = Mutex((arrived: 0, abandoned: false))
    private let released = DispatchSemaphore(value: 0)

    init(parties: Int, action: @escaping @Sendable () -> Void) {
        self.parties = parties
        self.action = action
    }

    /// Waits until every party arrived (at most 10 minutes).
    /// - Throws: `LoadgenError` if another party failed before arriving, or on the timeout.
    func arrive() throws {
        let (last, abandoned) = state.withLock { state in
            state.arrived += 1
            return (state.arrived == parties, state.abandoned)
        }
        if abandoned { throw LoadgenError(.process, "another worker's drive failed before its start") }
        if last {
            action()
            for _ in 1..<parties { released.signal() }
            return
        }
        guard released.wait(timeout: .now() + 600) == .success else {
            throw LoadgenError(.timeout, "the other workers' drives did not start within 600 s")
        }
        if state.withLock({ $0.abandoned }) {
            throw LoadgenError(.process, "another worker's drive failed before its start")
        }
    }

    /// Releases the waiting parties with an error (a party failed and will never arrive).
    func abandon() {
        let waiting = state.withLock { state in
            guard !state.abandoned, state.arrived < parties else { return 0 }
            state.abandoned = true
            return state.arrived
        }
        for _ in 0..<waiting { released.signal() }
    }
}
