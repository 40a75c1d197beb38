import Foundation
import ReceiptsClient
import ReceiptsTestKit
import ReceiptsWire

extension BenchRun {
    /// Restart after kill -9: log replay, then two compactions (the log keeps one older snapshot
    /// generation as a fallback, so only the second frees segments), snapshot load, disk use.
    mutating func restart() throws {
        let set = FrameSet.make(
            shape: shape,
            events: count(2_000_000, smoke: 20_000),
            batchSize: 1000,
            trackUpdates: false
        )
        let daemon = try self.daemon(["--compact-bytes", "1000000000000"])
        defer { daemon.terminate() }
        // The baseline: what a restart costs with nothing to recover (process start, opening an
        // empty log, binding, the first health round trip), the median of three.
        let emptySeconds = ResultTable.median(
            try (0..<3).map { _ in
                daemon.kill9()
                return try daemon.start()
            }
        )
        let emptyBaseline = "empty log: " + ResultTable.seconds(emptySeconds)
        /// A restart's time and rate, and its rate once the empty-log restart is taken off.
        func restartCell(seconds: Double, count: Int, unit: String) -> String {
            let beyond = ResultTable.rate(Double(count) / max(seconds - emptySeconds, 1e-3), unit)
            return ResultTable.seconds(seconds) + ", " + ResultTable.rate(Double(count) / seconds, unit)
                + " (\(beyond) beyond the baseline)"
        }
        let split = set.frames.count * 9 / 10
        let first = set.slice(0..<split)
        let options = DriveOptions(window: 4)
        _ = try LoadDriver(context: context, daemon: daemon).drive(
            first,
            gateways: shape.gateways,
            conversations: shape.conversations,
            options: options
        )
        daemon.kill9()
        let replayed = first.eventCount + set.setupEventCount
        let replaySeconds = try daemon.start()
        table.add(
            "restart after kill -9: replay \(Self.count(replayed)) events from the log (launch → health answers)",
            ours: restartCell(seconds: replaySeconds, count: replayed, unit: "events/s"),
            baseline: emptyBaseline,
            target: ">= 1M events/s"
        )

        let logBytes = daemon.diskBytes()
        _ = try compact(daemon.client)
        _ = try LoadDriver(context: context, daemon: daemon).drive(
            set.slice(split..<set.frames.count),
            gateways: shape.gateways,
            conversations: shape.conversations,
            options: options
        )
        let compaction = try compact(daemon.client)
        let compactedBytes = daemon.diskBytes()
        daemon.kill9()
        let snapshotSeconds = try daemon.start()
        table.add(
            "restart from snapshot: \(Self.count(set.receiptCount)) receipts, "
                + "\(ResultTable.bytes(Double(compaction.snapshotBytes))) (launch → health)",
            ours: restartCell(seconds: snapshotSeconds, count: set.receiptCount, unit: "receipts/s"),
            baseline: emptyBaseline,
            target: ">= 5M receipts/s"
        )
        table.add(
            "disk after 2 compactions vs live state (\(Self.count(set.eventCount + set.setupEventCount)) events logged)",
            ours:
                "\(ResultTable.bytes(Double(compactedBytes))) on disk (log alone was \(ResultTable.bytes(Double(logBytes))) at 90%)",
            baseline: "\(ResultTable.bytes(Double(compaction.snapshotBytes))) snapshot",
            ratio: ResultTable.ratio(Double(compactedBytes), Double(compaction.snapshotBytes)),
            target: "proportional to live state"
        )
        table.note(
            "Restart: receiptd killed with SIGKILL after loading 90% of the workload, started again on the same "
                + "directory; the time runs from launching the process to its first health answer, so it includes "
                + "process start; the baseline is the same restart with an empty log. Then: compaction, the last "
                + "10%, compaction, SIGKILL, start from the snapshot. "
                + "Receipts are (message, recipient) pairs of every message in the state. A compaction deletes the "
                + "segments the previous snapshot covers (one older generation stays as a fallback) and never the "
                + "active segment (64 MiB), so disk = two snapshots + the log since the older one."
        )
    }

    private func compact(_ client: ReceiptsClient) throws -> CompactResult {
        try BlockingWait.run { try await client.compact(worker: 0) }
    }
}
