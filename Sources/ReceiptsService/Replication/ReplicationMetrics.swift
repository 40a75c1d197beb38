import Metrics
import ReceiptsReplication
import ReceiptsWire
import Synchronization

/// A member's replication metrics (deploy/REPLICATION.md, section 13), through swift-metrics:
/// its role and term, and on a primary each standby's lag, the in-sync set's size and the time
/// spent without a standby in sync.
final class ReplicationMetrics: ShippingMetrics {
    /// `receiptd_replication_role`: a series for each role, 1 for the current one.
    private let roles: [MemberRole: Gauge]
    private let term = Gauge(label: MetricCatalog.replicationTerm.name)
    private let inSync = Gauge(label: MetricCatalog.replicationInSync.name)
    private let unsynced = FloatingPointCounter(label: MetricCatalog.replicationUnsynced.name)
    private let stalled = FloatingPointCounter(label: MetricCatalog.replicationStalled.name)
    private let truncated = Metrics.Counter(label: MetricCatalog.replicationTruncatedBytes.name)
    /// The lag series of each standby, by member name.
    private let lags = Mutex<[String: (bytes: Gauge, seconds: Gauge)]>([:])

    /// Registers the member's series, exported from the start: its role `waiting`, term 0.
    init() {
        var roles: [MemberRole: Gauge] = [:]
        for role in MemberRole.allCases {
            roles[role] = Gauge(label: MetricCatalog.replicationRole.name, dimensions: [("role", role.rawValue)])
        }
        self.roles = roles
        record(role: .waiting, term: 0)
        inSync.record(0)
        unsynced.increment(by: 0)
        stalled.increment(by: 0)
        truncated.increment(by: 0)
    }

    /// Sampled with the other gauges.
    var sampleIntervalMilliseconds: Int64 { ServiceMetrics.gaugeIntervalMilliseconds }

    /// Records the member's role and the term it serves or follows. A member that is not
    /// primary has no in-sync set: the size its last term as primary left is cleared, so a new
    /// primary's shows only what its own shipper recorded.
    func record(role current: MemberRole, term value: UInt64) {
        for (role, gauge) in roles { gauge.record(role == current ? 1 : 0) }
        term.record(Double(value))
        if current != .primary { inSync.record(0) }
    }

    /// Records a standby's lag: in bytes, and in seconds for how long it has lacked durable records.
    func recordLag(member: String, bytes: UInt64, seconds: Double) {
        let series = lags.withLock { lags in
            if let series = lags[member] { return series }
            let dimensions = [("member", member)]
            let series = (
                Gauge(label: MetricCatalog.replicationLagBytes.name, dimensions: dimensions),
                Gauge(label: MetricCatalog.replicationLagSeconds.name, dimensions: dimensions)
            )
            lags[member] = series
            return series
        }
        series.bytes.record(Double(bytes))
        series.seconds.record(seconds)
    }

    /// Removes the lag series of standbys that no longer have a session.
    func forgetLags(except members: Set<String>) {
        let gone = lags.withLock { lags in
            let gone = lags.filter { !members.contains($0.key) }
            for member in gone.keys { lags[member] = nil }
            return gone.values
        }
        for series in gone {
            series.bytes.destroy()
            series.seconds.destroy()
        }
    }

    /// Records the in-sync set's size.
    func recordInSync(_ count: Int) {
        inSync.record(count)
    }

    /// Adds time spent acknowledging alone (`unsynced`) or refusing ingest (`stalled`).
    func addTime(unsynced unsyncedSeconds: Double, stalled stalledSeconds: Double) {
        if unsyncedSeconds > 0 { unsynced.increment(by: unsyncedSeconds) }
        if stalledSeconds > 0 { stalled.increment(by: stalledSeconds) }
    }

    /// Counts a promotion (`reason`: `lease`, or `takeover` after deposing a silent primary).
    func promoted(reason: String) {
        Metrics.Counter(label: MetricCatalog.replicationPromotions.name, dimensions: [("reason", reason)]).increment()
    }

    /// Counts a deposition (`reason`: `lease_expired`, `superseded`).
    func deposed(reason: String) {
        Metrics.Counter(label: MetricCatalog.replicationDepositions.name, dimensions: [("reason", reason)]).increment()
    }

    /// Counts bytes a rejoining member cut back.
    func truncated(bytes: UInt64) {
        truncated.increment(by: Int64(bytes))
    }
}
