import Foundation
import ReceiptsClient
import ZeroMQ

/// The state of one `bench` invocation: its sizes, its table, and every scenario.
struct BenchRun {
    let context: ZMQContext
    let shape: WorkloadShape
    let smoke: Bool
    let repeats: Int
    let scale: Double
    var table = ResultTable()
    /// One 4 KiB write + fdatasync, p50 / p99 / p99.9 in µs (the floor under durable latency).
    var syncLatency: [Double]?

    init(context: ZMQContext, shape: WorkloadShape, smoke: Bool, repeats: Int, scale: Double) {
        self.context = context
        var shape = shape
        if smoke {
            shape.conversations = min(shape.conversations, 1000)
            shape.users = min(shape.users, 5000)
        }
        self.shape = shape
        self.smoke = smoke
        self.repeats = repeats
        self.scale = scale
    }

    /// A count scaled by `--scale`, or a small one in a smoke run.
    func count(_ full: Int, smoke small: Int) -> Int {
        smoke ? small : max(1, Int(Double(full) * scale))
    }

    /// The workload's frames of `batchSize` events, `full` events in all (`small` with `--smoke`),
    /// without update tracking.
    func frames(_ full: Int, smoke small: Int, batchSize: Int) -> FrameSet {
        FrameSet.make(shape: shape, events: count(full, smoke: small), batchSize: batchSize, trackUpdates: false)
    }

    /// The one-event-per-frame workload that the single-event rows of every scenario share.
    func singleEventFrames() -> FrameSet {
        frames(200_000, smoke: 5_000, batchSize: 1)
    }

    /// Runs `measure` `repeats` times and returns the median.
    func median(_ measure: () throws -> Double) rethrows -> Double {
        var values: [Double] = []
        for _ in 0..<repeats { values.append(try measure()) }
        return ResultTable.median(values)
    }

    /// Runs `first` and `second` alternately, `repeats` times each, and returns their medians:
    /// interleaved, both see the same machine (a noisy neighbour hits both, not one).
    func interleavedMedians(
        _ first: () throws -> Double,
        _ second: () throws -> Double
    ) rethrows -> (first: Double, second: Double) {
        let medians = try interleavedMedians(count: 2) { try $0 == 0 ? first() : second() }
        return (medians[0], medians[1])
    }

    /// Runs measurements 0..<count in turn, `repeats` rounds, and returns their medians in order:
    /// interleaved, all see the same machine (a noisy neighbour hits every one, not one).
    /// - Parameter measure: Takes a measurement's index, returns its value.
    func interleavedMedians(count: Int, _ measure: (Int) throws -> Double) rethrows -> [Double] {
        try interleavedRuns(count: count, measure).map(ResultTable.median)
    }

    /// Runs measurements 0..<count in turn, `repeats` rounds, and returns every measurement's
    /// runs, in order.
    func interleavedRuns<Run>(count: Int, _ measure: (Int) throws -> Run) rethrows -> [[Run]] {
        var runs = [[Run]](repeating: [], count: count)
        for _ in 0..<repeats {
            for index in 0..<count { runs[index].append(try measure(index)) }
        }
        return runs
    }

    /// Runs `measure` `repeats` times and returns the result with the median events/s.
    func medianResult(_ measure: () throws -> DriveResult) rethrows -> DriveResult {
        Self.medianRun(try (0..<repeats).map { _ in try measure() }, by: \.eventsPerSecond)
    }

    /// The run whose `rate` is the median (the lower one of an even count).
    static func medianRun<Run>(_ runs: [Run], by rate: (Run) -> Double) -> Run {
        runs.sorted { rate($0) < rate($1) }[(runs.count - 1) / 2]
    }

    /// Starts a fresh receiptd for one measurement.
    /// - Parameter binary: Another build's receiptd; nil for this build's.
    func daemon(_ arguments: [String] = [], curve: Bool = false, binary: URL? = nil) throws -> DaemonProcess {
        try DaemonProcess(context: context, arguments: arguments, curve: curve, binary: binary)
    }

    /// Drives a fresh receiptd with `set`; the result includes the CPU time receiptd spent meanwhile.
    /// - Parameters:
    ///   - curve: Run receiptd and every gateway socket with CURVE.
    ///   - binary: Another build's receiptd; nil for this build's.
    ///   - during: Called once the daemon serves, before the load starts.
    ///   - beforeMeasuring: Called after the setup frames, just before the measured ones.
    ///   - afterLoad: Called once the measured frames are answered, while the daemon still serves.
    func drive(
        _ set: FrameSet,
        _ options: DriveOptions,
        arguments: [String] = [],
        curve: Bool = false,
        binary: URL? = nil,
        during: (DaemonProcess) throws -> Void = { _ in },
        beforeMeasuring: () throws -> Void = {},
        afterLoad: () throws -> Void = {}
    ) throws -> DriveResult {
        let daemon = try daemon(arguments, curve: curve, binary: binary)
        defer { daemon.terminate() }
        try during(daemon)
        let cpuBefore = Self.cpuSeconds(of: daemon.processIdentifier)
        let workerBefore = Self.cpuSeconds(of: daemon.processIdentifier, thread: "receiptd-worker")
        var result = try LoadDriver(context: context, daemon: daemon).drive(
            set,
            gateways: shape.gateways,
            conversations: shape.conversations,
            options: options,
            beforeMeasuring: beforeMeasuring
        )
        try afterLoad()
        result.daemonCPUSeconds = Self.cpuSeconds(of: daemon.processIdentifier) - cpuBefore
        result.workerCPUSeconds =
            Self.cpuSeconds(of: daemon.processIdentifier, thread: "receiptd-worker") - workerBefore
        if result.rejected > 0 {
            FileHandle.standardError.write(Data("warning: \(result.rejected) events rejected\n".utf8))
        }
        return result
    }

    /// Sends `set` through ReceiptsClient to a fresh receiptd, from `callers` concurrent tasks.
    func driveThroughClient(_ set: FrameSet, callers: Int) throws -> DriveResult {
        let daemon = try daemon()
        defer { daemon.terminate() }
        let driver = ClientDriver(
            context: context,
            worker: Cluster.Worker(
                ingest: daemon.ingestEndpoint,
                query: daemon.queryEndpoint,
                publish: daemon.publishEndpoint
            ),
            curve: daemon.clientKeys
        )
        let result = try driver.drive(set, conversations: shape.conversations, callers: callers, trackLatency: false)
        if result.rejected > 0 {
            FileHandle.standardError.write(Data("warning: \(result.rejected) events rejected\n".utf8))
        }
        return result
    }
}
