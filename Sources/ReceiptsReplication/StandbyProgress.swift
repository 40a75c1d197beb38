/// What the primary knows of one standby, for the in-sync set and the metrics.
package struct StandbyProgress: Equatable, Sendable {
    package var member: String
    /// The session these positions belong to: a new session's positions replace the old ones.
    package var session: UInt64
    package var appended: UInt64
    package var durable: UInt64
    package var applied: UInt64
    /// When the standby was last heard from (monotonic milliseconds).
    package var lastHeard: Int64

    package init(member: String, session: UInt64, appended: UInt64, durable: UInt64, applied: UInt64, lastHeard: Int64)
    {
        self.member = member
        self.session = session
        self.appended = appended
        self.durable = durable
        self.applied = applied
        self.lastHeard = lastHeard
    }
}
