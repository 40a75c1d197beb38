import Foundation
import Metrics
import ReceiptLog
import ReceiptsCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The worker's metrics beyond its counters: histograms and gauges, each created once with
/// fixed dimensions (swift-metrics' correct usage pattern) and reported to whatever backend
/// the executable bootstrapped.
///
/// Histograms are recorded where their events happen (`groupCommitted` on the log's writer
/// thread, the rest on the loop); gauges are sampled by the loop about once a second.
final class ServiceMetrics: Sendable {
    /// How often the loop samples the gauges.
    static let gaugeIntervalMilliseconds: Int64 = 1000

    let ackLatency = Metrics.Timer(label: MetricCatalog.ackLatency.name)
    /// One histogram per stage of the pipeline and the log (the publishing thread records its own).
    private let ingestStages = Dictionary(
        uniqueKeysWithValues: IngestStage.perFrame.map { stage in
            (stage, Metrics.Timer(label: MetricCatalog.ingestStages.name, dimensions: [("stage", stage.rawValue)]))
        }
    )
    /// The log's last group commits, for the stages of traced frames.
    let commitTimeline = CommitTimeline()
    let eventsPerFrame = Recorder(label: MetricCatalog.eventsPerFrame.name, aggregate: true)
    let snapshotDuration = Metrics.Timer(label: MetricCatalog.snapshotDuration.name)
    let snapshotBytes = Gauge(label: MetricCatalog.snapshotBytes.name)
    let recoveryDuration = Gauge(label: MetricCatalog.recoveryDuration.name)
    private let fsyncDuration = Metrics.Timer(label: MetricCatalog.fsyncDuration.name)
    private let framesPerGroupCommit = Recorder(label: MetricCatalog.framesPerGroupCommit.name, aggregate: true)
    private let awaitingDurability = Gauge(label: MetricCatalog.awaitingDurability.name)
    private let pendingReceipts = Gauge(label: MetricCatalog.pendingReceipts.name)
    private let pendingReceiptsDropped = Metrics.Counter(label: MetricCatalog.pendingReceiptsDropped.name)
    private let pendingReceiptsDiscarded = Metrics.Counter(label: MetricCatalog.pendingReceiptsDiscarded.name)
    private let conversations = Gauge(label: MetricCatalog.stateConversations.name)
    private let messages = Gauge(label: MetricCatalog.stateMessages.name)
    private let members = Gauge(label: MetricCatalog.stateMembers.name)
    private let logBytes = Gauge(label: MetricCatalog.logBytes.name)
    private let residentMemory = Gauge(label: MetricCatalog.residentMemory.name)

    /// The one `receiptd_worker_info` series: this worker's ordinal and the worker count.
    private let workerInfo = Mutex<Gauge?>(nil)

    /// Registers every metric, so each is exported from the start, at 0.
    init() {}

    /// Sets the worker's info to the worker count its log holds (at start-up, and after a
    /// rebalance changed it): the previous series is removed, so exactly one is exported.
    func recordWorkerInfo(index: Int, count: Int) {
        let gauge = Gauge(
            label: MetricCatalog.workerInfo.name,
            dimensions: [("worker", "\(index)"), ("workers", "\(count)")]
        )
        gauge.record(1)
        workerInfo.withLock { current in
            current?.destroy()
            current = gauge
        }
    }

    /// Records one step of the log's writer thread.
    func groupCommitted(_ commit: GroupCommit) {
        if commit.records > 0 { framesPerGroupCommit.record(commit.records) }
        if let duration = commit.syncDuration { fsyncDuration.record(duration: duration) }
        commitTimeline.record(commit)
    }

    /// Records how long a traced frame spent in `stage` (any but `publish`).
    func record(_ stage: IngestStage, nanoseconds: UInt64) {
        ingestStages[stage]?.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// Samples the gauges (on the loop's thread, which owns the engine).
    /// - Parameters:
    ///   - engine: The engine's sizes.
    ///   - before: The engine's totals at the last sample; the counters grow by the difference.
    ///   - awaiting: Batches and replies waiting for durability.
    ///   - log: The log, for its bytes on disk.
    func sample(engine: EngineCounters, before: EngineCounters, awaiting: Int, log: ReceiptLog) {
        pendingReceipts.record(engine.heldReceipts)
        pendingReceiptsDropped.increment(
            by: Int64(max(0, engine.droppedPendingReceipts - before.droppedPendingReceipts))
        )
        pendingReceiptsDiscarded.increment(
            by: Int64(max(0, engine.discardedHeldReceipts - before.discardedHeldReceipts))
        )
        conversations.record(engine.conversations)
        messages.record(engine.messages)
        members.record(engine.members)
        awaitingDurability.record(awaiting)
        logBytes.record(Double(log.bytesOnDisk))
        if let resident = Self.residentBytes() { residentMemory.record(resident) }
    }

    /// Resident set size from /proc/self/statm (its second field, in pages).
    private static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }
}
