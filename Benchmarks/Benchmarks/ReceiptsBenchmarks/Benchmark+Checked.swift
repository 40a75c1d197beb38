import Benchmark

extension Benchmark.Configuration {
    /// The configuration of a benchmark whose allocations `thresholds check` holds to the
    /// checked-in `Thresholds/` (`thresholds update --metric mallocCountTotal` writes them).
    ///
    /// Allocation counts, not time: on a shared 2-core VM wall time moves by tens of percent from
    /// one minute to the next, and instruction counts need hardware counters this VM does not
    /// expose (no `cpu` PMU under /sys/bus/event_source). Allocations per sample are exact, so
    /// the tolerance is small: more than 1% or more than 2 allocations per sample at p90 (both
    /// are checked; either fails), so one more allocation per event in the frame benchmarks, or
    /// per call in the scaled ones (1000 calls a sample), fails, even where the count was 0.
    /// The run is a fixed number of iterations, not a duration, so that an engine grows the
    /// same way on a fast and a slow machine and its growth allocations fall into the same samples.
    ///
    /// A checked benchmark's name has no space or slash: `thresholds update` writes
    /// `Thresholds/<target>.<name>.p90.json` with those replaced by `_`, but `thresholds check`
    /// looks the file up by the name as it is (benchmark 1.38.1), so a name with a space is
    /// silently never checked.
    /// - Parameters:
    ///   - scalingFactor: Inner iterations per measured iteration.
    ///   - iterations: Measured iterations (samples).
    static func checked(scalingFactor: BenchmarkScalingFactor = .one, iterations: Int = 100) -> Self {
        .init(
            metrics: [.wallClock, .throughput, .mallocCountTotal],
            scalingFactor: scalingFactor,
            maxDuration: .seconds(300),
            maxIterations: iterations,
            thresholds: [.mallocCountTotal: BenchmarkThresholds(relative: [.p90: 1.0], absolute: [.p90: 2])]
        )
    }
}
