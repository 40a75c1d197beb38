import Foundation
import ReceiptsWire

extension BenchRun {
    /// Restart after kill -9: log replay, then compaction and snapshot load; disk use.
    mutating func restart() throws {
        let set = FrameSet.make(shape: shape, events: count(2_000_000, smoke: 20_000), batchSize: 1000, trackUpdates: false)
        let daemon = try self.daemon(["--compact-bytes", "1000000000000"])
        defer { daemon.terminate() }
        _ = try LoadDriver(context: context, daemon: daemon).drive(
            set, gateways: shape.gateways, conversations: shape.conversations, options: DriveOptions(window: 4))
        daemon.kill9()
        let replayed = set.eventCount + set.setupEventCount
        let replaySeconds = try daemon.start()
        table.add(
            "restart after kill -9: replay \(Self.count(replayed)) events from the log (launch → health answers)",
            ours: ResultTable.seconds(replaySeconds) + ", " + ResultTable.rate(Double(replayed) / replaySeconds),
            target: ">= 1M events/s")

        let logBytes = daemon.diskBytes()
        let query = QueryClient(context: context, endpoint: daemon.queryEndpoint)
        guard case .compact(let compaction) = try query.ask(.compact, timeoutMilliseconds: 300_000) else {
            throw LoadgenError(.protocolViolation, "compaction failed")
        }
        let compactedBytes = daemon.diskBytes()
        daemon.kill9()
        let snapshotSeconds = try daemon.start()
        table.add(
            "restart from snapshot: \(Self.count(set.receiptCount)) receipts, \(ResultTable.bytes(Double(compaction.snapshotBytes))) (launch → health)",
            ours: ResultTable.seconds(snapshotSeconds) + ", " + ResultTable.rate(Double(set.receiptCount) / snapshotSeconds, "receipts/s"),
            target: ">= 5M receipts/s")
        table.add(
            "disk after compaction vs live state (\(Self.count(replayed)) events logged)",
            ours: "\(ResultTable.bytes(Double(compactedBytes))) on disk (log was \(ResultTable.bytes(Double(logBytes))))",
            baseline: "\(ResultTable.bytes(Double(compaction.snapshotBytes))) snapshot",
            ratio: ResultTable.ratio(Double(compactedBytes), Double(compaction.snapshotBytes)), target: "proportional to live state")
        table.note(
            "Restart: receiptd killed with SIGKILL after the load, started again on the same directory; the time runs "
                + "from launching the process to its first health answer, so it includes process start. Receipts are "
                + "(message, recipient) pairs of every message in the state.")
    }
}
