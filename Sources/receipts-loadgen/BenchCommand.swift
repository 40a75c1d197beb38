import ArgumentParser
import Foundation
import ZeroMQ

/// The one documented benchmark command: starts its own receiptd processes, runs every
/// scenario and every baseline in the same invocation, and prints one table.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Run every end-to-end benchmark and baseline; print measure | receiptd | baseline | ratio | target."
    )

    @Flag(help: "A seconds-long tiny run of every scenario, to keep the harness working (CI).")
    var smoke = false

    @Option(help: "Run each throughput and latency measurement this many times and report the median.")
    var repeats = 1

    @Option(help: "Multiply the event counts and durations of every scenario by this.")
    var scale = 1.0

    @Option(help: "Messages in the larger memory workload (the smaller has half); e.g. 10000000 for the 10M row.")
    var memoryMessages = 1_000_000

    @Option(help: "Events per frame in the latency scenarios (what a gateway batches within ~1 ms).")
    var latencyBatch = 20

    @Option(help: "Offered rates (events/s) for the latency scenarios, comma-separated.")
    var latencyRates = "50000,200000"

    @Option(help: "Seconds each fixed-rate latency scenario offers load.")
    var latencySeconds = 5.0

    @Option(help: "The Redis function library (default: Benchmarks/redis/receipts.lua in the source tree).")
    var redisScript: String?

    @Option(
        help: """
            Concurrent callers of the ReceiptsClient rows, comma-separated: one row per count, each \
            task awaiting one single-event send call at a time.
            """
    )
    var clientCallers = "64,256,1024"

    @Option(
        help: """
            Only these sections, comma-separated: \(Self.sections.joined(separator: ",")). ingest = batched + \
            single; single = the one-event-per-frame rows and the ReceiptsClient rows; client = the \
            ReceiptsClient rows and the acknowledged one-event-per-frame row they are compared with; curve = \
            batched and one-event ingest with CurveZMQ on and off; workers = batched ingest against 1 and 2 \
            workers, the load split by owner; replication = ingest and latency with --replication-ack local and \
            standby beside one unreplicated worker; failover = SIGKILLs and SIGSTOPs of a replicated primary \
            (with etcd); falsefailover = a replicated ordinal on a loaded machine for --false-failover-minutes; \
            groups = reads applied in groups of 10 to 10,000 members, in process; readstate = batched ingest \
            with and without read-state updates on users' topics; devicesync = a read on one device to its read \
            state on another, idle and at 50k events/s; pipelining = batched ingest with 2 frames \
            of 500 events in flight per gateway, beside the wire limit and --baseline-receiptd; handoffs = \
            receiptd's context switches and read/write system calls per acknowledged frame, by thread; \
            mentions = batched ingest with every message naming two recipients, and without mentions; threads = \
            batched ingest with a third of the messages thread replies, and without, then a group of 10,000 \
            with 1,000 threads, in process.
            """
    )
    var only: String?

    /// The names `--only` takes.
    static let sections = [
        "ingest", "batched", "single", "client", "curve", "metrics", "workers", "latency", "disk", "redis", "memory",
        "restart", "storage", "replication", "failover", "falsefailover", "groups", "readstate", "devicesync",
        "pipelining", "handoffs", "mentions", "threads",
    ]

    @Option(
        help: "Another build's receiptd for the pipelining section to take turns with (e.g. one built at da708f3)."
    )
    var baselineReceiptd: String?

    @Option(help: "SIGKILLs, and as many SIGSTOPs, of the primary in the failover section.")
    var failoverKills = 20

    @Option(help: "How long the falsefailover section runs, in minutes.")
    var falseFailoverMinutes = 10.0

    @OptionGroup var workload: WorkloadOptions

    func validate() throws {
        guard repeats >= 1, scale > 0, memoryMessages >= 2, latencyBatch >= 1, latencySeconds > 0 else {
            throw ValidationError("repeats, scale, memory-messages, latency-batch and latency-seconds must be positive")
        }
        guard let callers = callerCounts, callers.allSatisfy({ $0 >= 1 }) else {
            throw ValidationError("client-callers must be positive integers, comma-separated")
        }
        if let unknown = only?.split(separator: ",").first(where: { !Self.sections.contains(String($0)) }) {
            throw ValidationError(
                "unknown section '\(unknown)' in --only; known: \(Self.sections.joined(separator: ","))"
            )
        }
    }

    /// `--client-callers` as numbers, or nil if one is not a number.
    private var callerCounts: [Int]? {
        let counts = clientCallers.split(separator: ",").map { Int($0) }
        return counts.contains(nil) ? nil : counts.compactMap { $0 }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let context = try ZMQContext()
        defer { context.terminate() }
        var bench = BenchRun(
            context: context,
            shape: workload.shape,
            smoke: smoke,
            repeats: smoke ? 1 : repeats,
            scale: scale
        )
        let sections = only.map { Set($0.split(separator: ",").map(String.init)) }
        func wanted(_ name: String) -> Bool { sections?.contains(name) ?? true }
        FileHandle.standardError.write(Data("workload: \(bench.shape)\n".utf8))
        let loadBefore = Self.loadAverage()
        if wanted("disk") { try bench.disk() }
        if wanted("ingest") || wanted("batched") { try bench.ingestBatched() }
        if wanted("ingest") || wanted("single") || wanted("client") {
            try bench.ingestSingle(
                fireAndForget: wanted("ingest") || wanted("single"),
                clientCallers: callerCounts ?? []
            )
        }
        if wanted("curve") { try bench.curveCost() }
        if wanted("metrics") { try bench.metricsCost() }
        if wanted("workers") { try bench.workerScaling() }
        if wanted("latency") {
            let rates = latencyRates.split(separator: ",").compactMap { Double($0) }
            try bench.latency(rates: rates, batch: latencyBatch, seconds: latencySeconds)
        }
        if wanted("redis") { try bench.redis(script: redisScript ?? Self.defaultRedisScript) }
        if wanted("memory") { try bench.memory(messages: smoke ? 20_000 : memoryMessages) }
        if wanted("restart") { try bench.restart() }
        if wanted("storage") { try bench.storage() }
        if wanted("replication") { try bench.replication() }
        if wanted("failover") { try bench.failover(kills: smoke ? 2 : failoverKills) }
        if wanted("falsefailover") { try bench.falseFailovers(minutes: smoke ? 0.2 : falseFailoverMinutes) }
        if wanted("groups") { try bench.groups() }
        if wanted("readstate") { try bench.readStateCost() }
        if wanted("devicesync") { try bench.deviceSync() }
        if wanted("pipelining") {
            try bench.ingestLittlePipelining(baseline: baselineReceiptd.map { URL(fileURLWithPath: $0) })
        }
        if wanted("handoffs") { try bench.handoffs() }
        if wanted("mentions") { try bench.mentionCost() }
        if wanted("threads") { try bench.threadCost() }
        bench.table.note(
            "Machine load average (1 min) \(loadBefore) at the start, \(Self.loadAverage()) at the end: with 2 cores, "
                + "anything above ~2 means other processes competed with receiptd and the load generator."
        )
        print(bench.table.render())
    }

    /// The 1-minute load average from /proc/loadavg.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.map(String.init) ?? "?"
    }

    /// Benchmarks/redis/receipts.lua beside this file's package, when run from the source tree.
    static var defaultRedisScript: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Benchmarks/redis/receipts.lua").path
    }
}
