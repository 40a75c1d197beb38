/// A libFuzzer target: takes any bytes, and throws `InvariantViolation` when the code under
/// test breaks one of its promises (a crash is caught by the sanitizer instead).
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `EventBatchCodec.decode`: frames that decode survive a re-encode, and their events apply.
    case eventBatch = "event-batch"
    /// `Query.decode`: queries that decode survive a re-encode.
    case query
    /// `ReceiptEngine(restoringFrom:)`: a restored state answers, takes events, expires, and
    /// snapshots again.
    case snapshot
    /// `SegmentScan`: the scanner's account of a segment agrees with the records in it.
    case segment
    /// `ReceiptEngine.apply`: event sequences derived from the input keep every invariant.
    case engine
    /// `ReplicationRequest.decode`: a standby's requests that decode survive a re-encode.
    case replicationRequest = "replication-request"
    /// `ReplicationMessage.decode`: a primary's messages (one or two frames) that decode survive a
    /// re-encode, their second frame unchanged.
    case replicationMessage = "replication-message"

    /// Runs one input through the target.
    ///
    /// - Parameter input: Any bytes.
    /// - Throws: `InvariantViolation` naming the broken invariant.
    public func run(_ input: [UInt8]) throws(InvariantViolation) {
        switch self {
        case .eventBatch: try WireTargets.eventBatch(input)
        case .query: try WireTargets.query(input)
        case .snapshot: try SnapshotTarget.run(input)
        case .segment: try SegmentTarget.run(input)
        case .engine: try EngineTarget.run(input)
        case .replicationRequest: try ReplicationTargets.request(input)
        case .replicationMessage: try ReplicationTargets.message(input)
        }
    }

    /// The longest input worth trying: engine scripts are two bytes a step, and past 48 steps
    /// they mostly make each execution slower.
    public var maxInputLength: Int {
        switch self {
        case .engine: 96
        case .eventBatch, .query, .snapshot, .segment, .replicationRequest, .replicationMessage: 4096
        }
    }
}

/// A promise the code under test broke for one input.
public struct InvariantViolation: Error, CustomStringConvertible {
    /// What was expected and what happened.
    public var description: String
}

/// Throws an `InvariantViolation` with `message` unless `condition` holds.
func require(_ condition: Bool, _ message: @autoclosure () -> String) throws(InvariantViolation) {
    if !condition { throw InvariantViolation(description: message()) }
}
