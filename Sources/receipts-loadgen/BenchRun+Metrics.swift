import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
                    let port = try MetricsScraper.freePort()
                    let scraper = MetricsScraper(url: "http://127.0.0.1:\(port)/metrics")
                    defer { scrapes += scraper.stop() }
                    return try drive(set, options, arguments: ["--http", "127.0.0.1:\(port)"], during: scraper.start)
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

/// GETs a URL every second on a thread of its own until stopped, as a Prometheus scrape would.
final class MetricsScraper: Sendable {
    private let url: URL
    private let stopped = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    /// Scrapes that got a 200.
    private let answered = Atomic(0)

    init(url: String) {
        self.url = URL(string: url)!
    }

    /// Starts scraping (the daemon is already serving).
    func start() {
        let thread = Thread { [self] in
            while stopped.wait(timeout: .now() + 1) == .timedOut {
                let done = DispatchSemaphore(value: 0)
                let task = URLSession.shared.dataTask(with: url) { [self] _, response, _ in
                    if (response as? HTTPURLResponse)?.statusCode == 200 { answered.add(1, ordering: .relaxed) }
                    done.signal()
                }
                task.resume()
                done.wait()
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

    /// A port free on loopback now (bound to 0, read back, released).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw LoadgenError(.system, "socket failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(descriptor, socketAddress, length) == 0 && getsockname(descriptor, socketAddress, &length) == 0
            }
        }
        guard bound else { throw LoadgenError(.system, "cannot bind a loopback port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
