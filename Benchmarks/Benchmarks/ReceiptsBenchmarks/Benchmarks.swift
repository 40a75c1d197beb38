import Benchmark

/// Every micro-benchmark of the package (end-to-end numbers come from `receipts-loadgen bench`).
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        maxDuration: .seconds(3),
        maxIterations: 1_000_000
    )
    engineBenchmarks()
    codecBenchmarks()
    logBenchmarks()
}
