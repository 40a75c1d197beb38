package import ReceiptsWire

/// Where a primary's `Shipper` reports replication (deploy/REPLICATION.md, section 13): the
/// daemon's metrics implement it; the shipper samples them about every
/// `sampleIntervalMilliseconds`.
package protocol ShippingMetrics: Sendable {
    /// How often the shipper samples its lag and set.
    var sampleIntervalMilliseconds: Int64 { get }
    /// Records the member's role and the term it serves (`deposed` while its lease lapsed).
    func record(role: MemberRole, term: UInt64)
    /// Records a standby's lag: in bytes, and in seconds for how long it has lacked durable records.
    func recordLag(member: String, bytes: UInt64, seconds: Double)
    /// Removes the lag series of standbys that no longer have a session.
    func forgetLags(except members: Set<String>)
    /// Records the in-sync set's size.
    func recordInSync(_ count: Int)
    /// Adds time spent acknowledging alone (`unsynced`) or refusing ingest (`stalled`).
    func addTime(unsynced: Double, stalled: Double)
}
