import Foundation
import ReceiptsTestKit
import Synchronization

extension BenchRun {
    /// The hot path's cost of metrics: batched and one-event-per-frame acknowledged ingest with
    /// `/metrics` served and scraped every second (as Prometheus would) beside `--http off`,
    /// interleaved run by run so that both see the same machine.
    mutating func metricsCost() throws {
        let batched = frames(1_000_000, smoke: 20_000, batchSize: 1000)
        let single = singleEventFrames()
        let scenarios = [
            ("durable ingest, batched (1000 events/frame)", batched, DriveOptions(acknowledged: true, window: 4)),
            (
                "ingest, one event per frame, acknowledged (256 in flight)", single,
                DriveOptions(acknowledged: true, window: 256)
            ),
        ]
        var scrapes = 0
        for (name, set, options) in scenarios {
            let (without, withMetrics) = try interleavedMedians(
                { try drive(set, options, arguments: ["--http", "off"]).eventsPerSecond },
                {
                    let port = try LoopbackPort.free()
                    let scraper = MetricsScraper(port: port)
                    defer { scrapes += scraper.stop() }
                    return try drive(
                        set,
                        options,
                        arguments: ["--http", "127.0.0.1:\(port)"],
                        during: { _ in scraper.start() }
                    )
                    .eventsPerSecond
                }
            )
            table.add(
                "metrics cost: \(name), /metrics scraped every 1 s",
                ours: ResultTable.rate(withMetrics),
                baseline: ResultTable.rate(without) + " (--http off)",
                ratio: ResultTable.ratio(withMetrics, without),
                target: "within noise (~1.00x)"
            )
        }
        table.note(
            "Metrics cost: each row is the median of \(repeats) run(s) per mode, the modes interleaved; "
                + "\(scrapes) scrapes answered in all. With --http off receiptd bootstraps no metrics backend "
                + "(swift-metrics' no-op handlers, as before metrics existed; the stats query's counters still "
                + "count); served, every counter, histogram and gauge goes to swift-prometheus."
        )
    }
}

/// GETs `/metrics` on a loopback port every second on a thread of its own until stopped, as a
/// Prometheus scrape would.
final class MetricsScraper: Sendable {
    private let port: Int
    private let stopped = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Scrapes that got a 200.
    private let answered = Atomic(0)

    init(port: Int) {
        self.port = port
    }

    /// Starts scraping (the daemon is already serving).
    func start() {
        let thread = Thread { [self] in
            while stopped.wait(timeout: .now() + 1) == .timedOut {
                if LoopbackHTTP.get(port: port, path: "/metrics")?.status == 200 { answered.add(1, ordering: .relaxed) }
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops scraping.
    /// - Returns: How many scrapes were answered.
    func stop() -> Int {
        stopped.signal()
        finished.wait()
        return answered.load(ordering: .relaxed)
    }
}
