import Glibc
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestKit
import ReceiptsWire
import ZeroMQ

/// Plays a `FrameSet` through ReceiptsClient, as gateways using the library would: each
/// frame's events in one `send` call, from many concurrent tasks, timed until every call has
/// its outcomes (acknowledged after fsync).
///
/// The events are the set's own frames decoded before the clock starts, sent with
/// `send(identified:)` so that they keep their ids: the workload, its duplicates included, is
/// exactly the one the raw rows send. Caller k sends frames k, k + callers, ..., so the events
/// in flight stay close together in each gateway's sequence (far inside receiptd's anti-replay
/// window), as with the raw rows' per-gateway windows.
struct ClientDriver {
    let context: ZMQContext
    let worker: Cluster.Worker
    /// CURVE keys when the worker requires them.
    let curve: CurveClientKeys?

    /// Sends the setup events (not timed), then the measured ones from `callers` tasks.
    /// - Parameters:
    ///   - set: The workload.
    ///   - conversations: Conversations in the workload (for the update collector).
    ///   - callers: Concurrent tasks, each awaiting one `send` at a time.
    ///   - trackLatency: Run a subscriber and record event → status update latency.
    /// - Returns: Outcomes, events/s and the frames the client made of the calls.
    /// - Throws: `WireError` for an undecodable frame, `ReceiptsClientError` from the client.
    func drive(_ set: FrameSet, conversations: Int, callers: Int, trackLatency: Bool) throws -> DriveResult {
        let setup = try set.setup.map { try EventBatchCodec.decode($0.bytes) }
        let calls = try set.frames.map { try EventBatchCodec.decode($0.bytes) }
        let client = try ReceiptsClient.harness(worker: worker, queryTimeoutMilliseconds: 10_000, curve: curve)
        defer { try? BlockingWait.run { await client.shutdown() } }
        try BlockingWait.run {
            for events in setup { _ = try await client.send(identified: events) }
        }

        let sendTimes = SendTimes(count: calls.count)
        let collector =
            trackLatency
            ? UpdateCollector(
                context: context,
                endpoint: worker.publish,
                curve: curve,
                expectations: set.expectations,
                sendTimes: sendTimes,
                conversations: conversations
            )
            : nil
        let framesBefore = client.currentStatistics
        let cpuBefore = Self.processCPUSeconds()
        let start = Monotonic.now()
        // The callers run on the cooperative pool, as a gateway's tasks would, not on the
        // bridge's serial queue; the command's own thread is the one that blocks.
        let tally = try BlockingWait.run(executor: globalConcurrentExecutor) {
            try await withThrowingTaskGroup(of: Tally.self) { group in
                for caller in 0..<min(callers, max(calls.count, 1)) {
                    group.addTask {
                        var tally = Tally()
                        for index in stride(from: caller, to: calls.count, by: callers) {
                            sendTimes[index] = Monotonic.now()
                            tally.count(try await client.send(identified: calls[index]))
                        }
                        return tally
                    }
                }
                return try await group.reduce(into: Tally()) { $0.add($1) }
            }
        }
        let end = Monotonic.now()
        let cpu = Self.processCPUSeconds() - cpuBefore
        let framesAfter = client.currentStatistics
        var result = DriveResult(
            events: set.eventCount,
            seconds: Monotonic.seconds(from: start, to: end),
            accepted: tally.accepted,
            duplicates: tally.duplicates,
            rejected: tally.rejected
        )
        result.clientFrames = framesAfter.framesSent - framesBefore.framesSent
        result.clientFramesResent = framesAfter.framesResent - framesBefore.framesResent
        result.clientCPUSeconds = cpu
        result.updates = try collector?.finish()
        return result
    }

    /// User + system CPU time of this process so far: during the timed phase, that is the
    /// client's loop thread and the calling tasks (the collector's thread too, with latency).
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// One caller's outcome counts.
    private struct Tally: Sendable {
        var accepted = 0
        var duplicates = 0
        var rejected = 0

        mutating func count(_ outcomes: [EventOutcome]) {
            for outcome in outcomes {
                switch outcome {
                case .accepted: accepted += 1
                case .duplicate: duplicates += 1
                case .rejected: rejected += 1
                }
            }
        }

        mutating func add(_ other: Tally) {
            accepted += other.accepted
            duplicates += other.duplicates
            rejected += other.rejected
        }
    }
}
