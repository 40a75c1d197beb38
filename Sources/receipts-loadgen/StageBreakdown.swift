import Foundation
import ReceiptsService
import ReceiptsTestKit

/// Where an acknowledged frame's time went, from receiptd's `/metrics`: the histograms of
/// `receiptd_ingest_stage_seconds{stage}` (a sample of the frames; `publish` per batch of the
/// publishing thread) and of `receiptd_ack_latency_seconds` (every frame), as the difference
/// of a scrape after the measured load and one before it, so that the setup is left out.
struct StageBreakdown {
    /// One histogram: its count, sum (seconds) and cumulative buckets by upper bound.
    struct ScrapedHistogram {
        var count = 0.0
        var sum = 0.0
        var buckets: [(bound: Double, count: Double)] = []

        /// The mean, in microseconds; nil without observations.
        var meanMicroseconds: Double? { count > 0 ? sum / count * 1e6 : nil }

        /// The upper bound of the bucket that holds the `quantile`-th observation, in
        /// microseconds (nil without observations, or past the last finite bound).
        func boundMicroseconds(_ quantile: Double) -> Double? {
            guard count > 0 else { return nil }
            let rank = quantile * count
            return buckets.first { $0.count >= rank }.flatMap { $0.bound.isFinite ? $0.bound * 1e6 : nil }
        }

        func subtracting(_ earlier: ScrapedHistogram) -> ScrapedHistogram {
            ScrapedHistogram(
                count: count - earlier.count,
                sum: sum - earlier.sum,
                buckets: buckets.map { bucket in
                    (bucket.bound, bucket.count - (earlier.buckets.first { $0.bound == bucket.bound }?.count ?? 0))
                }
            )
        }
    }

    private static let stageFamily = MetricCatalog.ingestStages.name
    private static let ackFamily = MetricCatalog.ackLatency.name

    /// Each stage's histogram.
    private(set) var stages: [IngestStage: ScrapedHistogram] = [:]
    /// The acknowledgement latency of every frame.
    private(set) var acknowledgement = ScrapedHistogram()

    /// Scrapes `/metrics` on `port`; nil when it does not answer.
    static func scrape(port: Int) -> StageBreakdown? {
        guard let response = LoopbackHTTP.get(port: port, path: "/metrics", timeoutMilliseconds: 5000),
            response.status == 200
        else { return nil }
        return StageBreakdown(exposition: response.body)
    }

    /// Reads the two families from Prometheus exposition text.
    init(exposition: String) {
        for line in exposition.split(separator: "\n") where line.hasPrefix("receiptd_") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            let series = line[..<space]
            if series.hasPrefix(Self.stageFamily + "_"), let name = Self.label("stage", in: series),
                let stage = IngestStage(rawValue: name)
            {
                Self.add(
                    value,
                    series: series,
                    family: Self.stageFamily,
                    to: &stages[stage, default: ScrapedHistogram()]
                )
            } else if series.hasPrefix(Self.ackFamily + "_") {
                Self.add(value, series: series, family: Self.ackFamily, to: &acknowledgement)
            }
        }
    }

    private init(stages: [IngestStage: ScrapedHistogram], acknowledgement: ScrapedHistogram) {
        self.stages = stages
        self.acknowledgement = acknowledgement
    }

    /// What happened between `earlier` and this scrape.
    func subtracting(_ earlier: StageBreakdown) -> StageBreakdown {
        StageBreakdown(
            stages: stages.reduce(into: [:]) { result, entry in
                result[entry.key] = entry.value.subtracting(earlier.stages[entry.key] ?? ScrapedHistogram())
            },
            acknowledgement: acknowledgement.subtracting(earlier.acknowledgement)
        )
    }

    /// One cell: each stage's mean and the bucket bound under its p99, then the
    /// acknowledgement's, in microseconds.
    var cell: String {
        // In the order a frame passes them, `publish` last.
        let parts = IngestStage.allCases.map { stage -> String in
            let name = stage.rawValue
            guard let histogram = stages[stage], let mean = histogram.meanMicroseconds else { return "\(name) —" }
            return "\(name) \(Self.format(mean)) (p99 ≤ \(histogram.boundMicroseconds(0.99).map(Self.format) ?? "∞"))"
        }
        let ack = acknowledgement.meanMicroseconds.map(Self.format) ?? "—"
        let ackBound = acknowledgement.boundMicroseconds(0.99).map(Self.format) ?? "∞"
        return parts.joined(separator: " · ") + "; acknowledged \(ack) (p99 ≤ \(ackBound))"
    }

    private static func format(_ microseconds: Double) -> String {
        microseconds >= 100 ? String(format: "%.0f", microseconds) : String(format: "%.1f", microseconds)
    }

    /// The value of label `name` in a series `family_suffix{a="x",b="y"}`.
    private static func label(_ name: String, in series: Substring) -> String? {
        guard let start = series.range(of: "\(name)=\"") else { return nil }
        let rest = series[start.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }

    private static func add(_ value: Double, series: Substring, family: String, to histogram: inout ScrapedHistogram) {
        let suffix = series.dropFirst(family.count + 1).prefix { $0 != "{" }
        switch suffix {
        case "count": histogram.count = value
        case "sum": histogram.sum = value
        case "bucket":
            guard let bound = label("le", in: series) else { return }
            histogram.buckets.append((bound == "+Inf" ? .infinity : Double(bound) ?? .infinity, value))
        default: break
        }
    }
}
