import Foundation
import Histogram

extension Histogram<UInt64> {
    /// An empty histogram of latencies in nanoseconds, up to 10 minutes, to three significant
    /// digits.
    static func latencyNanoseconds() -> Histogram<UInt64> {
        Histogram(
            lowestDiscernibleValue: 1,
            highestTrackableValue: 600_000_000_000,
            numberOfSignificantValueDigits: .three
        )
    }

    /// The value at `percentile`, in microseconds (the values being nanoseconds); nil when empty.
    func microseconds(atPercentile percentile: Double) -> Double? {
        totalCount > 0 ? Double(valueAtPercentile(percentile)) / 1000 : nil
    }

    /// "p50 412 µs, p90 …, p100 …" for `run`'s summary; nil when empty.
    var percentileLine: String? {
        guard totalCount > 0 else { return nil }
        return [50.0, 90, 99, 99.9, 100].map { p in
            String(format: "p%g %.0f µs", p, Double(valueAtPercentile(p)) / 1000)
        }
        .joined(separator: ", ")
    }
}
