import Benchmark
import Foundation
import Logging
import ReceiptLog

/// `ReceiptLog.append` without waiting for the disk (fsync none): the cost the service's loop
/// pays per batch; durable throughput per policy is in `receipts-loadgen bench` (storage rows).
func logBenchmarks() {
    for size in [100, 32 * 1024] {
        Benchmark(
            "ReceiptLog.append (\(size) B records, fsync none)",
            configuration: .init(metrics: [.wallClock, .throughput], scalingFactor: size < 1024 ? .kilo : .one)
        ) { benchmark in
            let directory = NSTemporaryDirectory() + "receipts-bench-\(UUID().uuidString)"
            defer { try? FileManager.default.removeItem(atPath: directory) }
            guard
                let log = try? ReceiptLog(
                    configuration: LogConfiguration(directory: directory, fsyncPolicy: .none),
                    logger: Logger(label: "bench"),
                    onDurable: {},
                    onFatal: { _ in }
                )
            else {
                fatalError("cannot open a log in \(directory)")
            }
            let payload = [UInt8](repeating: 7, count: size)
            benchmark.startMeasurement()
            payload.withUnsafeBytes { bytes in
                for _ in benchmark.scaledIterations {
                    blackHole(try? log.append(type: 1, payload: bytes))
                }
            }
            try? log.flush()
            benchmark.stopMeasurement()
            try? log.close()
        }
    }
}
