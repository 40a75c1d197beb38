/// The values the cluster simulation passes around: a member's log entries, the messages of the
/// simulated network, the bugs it can plant, and what it found.

/// One record of a member's log: a term's start, or a gateway's event, written in `term`.
struct SimulatedEntry: Equatable, CustomStringConvertible {
    enum Kind: Equatable {
        /// The term's `termStarted` record, written by its primary.
        case termStart(member: String)
        /// A gateway's event, by its id (`SimulatedWorkload` says what it is), taken at `at`
        /// (the primary's milliseconds: the engine's time for it).
        case event(UInt64, at: Int64)
    }

    var term: UInt64
    var kind: Kind

    var event: UInt64? {
        if case .event(let id, _) = kind { return id }
        return nil
    }

    var description: String {
        switch kind {
        case .termStart(let member): "T\(term)@\(member)"
        case .event(let id, _): "e\(id)/\(term)"
        }
    }
}

/// A message between members and gateways: the replication protocol of deploy/REPLICATION.md,
/// section 4, reduced to positions in a log of `SimulatedEntry`, and ingest with its replies.
enum SimulatedMessage {
    /// A standby opens a session, saying what its log holds.
    case follow(session: UInt64, knownTerm: UInt64, terms: [TermStartPoint], end: UInt64, durable: UInt64)
    /// The primary accepts the session; the standby continues (cut back) at `continueAt`.
    case accepted(session: UInt64, term: UInt64, continueAt: UInt64)
    /// The primary refuses the session: the standby knows a later term.
    case refused(session: UInt64, term: UInt64)
    /// Records from `start`, and the primary's acknowledged position.
    case records(session: UInt64, term: UInt64, start: UInt64, entries: [SimulatedEntry], acknowledged: UInt64)
    /// A standby's positions.
    case ack(session: UInt64, appended: UInt64, durable: UInt64)
    /// A gateway's frame of events.
    case ingest(events: [UInt64])
    /// The events of a frame are acknowledged (applied now or before: duplicates count).
    case acknowledged(events: [UInt64])
    /// Not the primary: the gateway reads the keys again.
    case notPrimary
    /// Refused for now (no standby in sync under `stall`, or the lease is uncertain).
    case unavailable
}

/// Where a term starts in a log.
struct TermStartPoint: Equatable {
    var term: UInt64
    var start: UInt64
}

/// A message on its way.
struct Envelope {
    var from: String
    var to: String
    var deliverAt: Int64
    /// The order it was sent in, so that equal delivery times keep one order for a seed.
    var sequence: UInt64
    var message: SimulatedMessage
}

/// A bug the simulation can plant in a member, to show that its checks catch it.
enum PlantedBug: String, CaseIterable, Sendable {
    /// The primary acknowledges on its own durability, before the in-sync standbys confirm.
    case acknowledgeBeforeStandbyConfirms
    /// A member campaigns whether or not it is eligible (in the latest term's in-sync set).
    case campaignWithoutInSyncCheck
    /// The primary keeps acknowledging after its lease deadline.
    case acknowledgeAfterLeaseDeadline
    /// A standby that rejoins keeps its tail instead of cutting back to the primary's history.
    case skipCutBackOnRejoin
    /// A new primary serves without writing its term's `termStarted` record.
    case promoteWithoutWritingTerm
    /// The primary counts its lease alive for the whole TTL after a renewal's send, on its own
    /// clock, with no margin for a clock slower than the coordinator's.
    case leaseDeadlineWithoutMargin
    /// A member whose log is cut back (a rejoin, or a machine crash) keeps its engine's state
    /// instead of rebuilding it from what the log still holds.
    case keepEngineAcrossCutBack
}

/// An invariant the simulation found broken.
struct SimulationFailure: Error, CustomStringConvertible {
    var seed: UInt64
    var time: Int64
    var invariant: String
    var trace: [String]

    var description: String {
        "seed \(seed) at \(time) ms: \(invariant)\n"
            + "replay: RECEIPTS_SIMULATION_SEED=\(seed) swift test --filter ClusterSimulationTests/replay\n"
            + "last events:\n" + trace.suffix(40).joined(separator: "\n")
    }
}
