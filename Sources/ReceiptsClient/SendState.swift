import ReceiptLog
import ReceiptsCore

/// A `send` call the ingest scheduler has taken: its outcomes so far. Its caller, if any,
/// waits in `ClientLoop` under the same request id (a cancelled caller no longer does, while
/// the events still go out and are acknowledged).
///
/// A class owned by the loop thread, so that settling one event changes one slot in place
/// (a struct taken out of the scheduler's dictionary would copy every outcome, per event).
final class SendState {
    var outcomes: [EventOutcome?]
    /// Slots not yet answered (an event without a conversation goes to every worker).
    var remaining: Int
    /// Set when the send was refused as a whole; answered once every slot is settled.
    var failure: ReceiptsClientError?
    /// Set when its caller stopped waiting: its remaining events are settled, not answered.
    var isCancelled = false
    /// Where the events' outbox record ends (they leave once it is durable); nil for sends
    /// not in the outbox.
    let outboxPosition: LogPosition?
    /// The ids to tell the outbox about once answered; empty for sends not in the outbox.
    let outboxIDs: [EventID]

    init(events: [Event], outboxPosition: LogPosition?) {
        self.outcomes = Array(repeating: nil, count: events.count)
        self.remaining = 0
        self.outboxPosition = outboxPosition
        self.outboxIDs = outboxPosition == nil ? [] : events.map(\.id)
    }

    /// Combines the answers of several workers to one event that went to all of them (user-wide
    /// events): applied anywhere counts as applied, then seen before, then the first rejection.
    static func merge(_ current: EventOutcome?, _ new: EventOutcome) -> EventOutcome {
        guard let current else { return new }
        func rank(_ outcome: EventOutcome) -> Int {
            switch outcome {
            case .accepted: 2
            case .duplicate: 1
            case .rejected: 0
            }
        }
        return rank(new) > rank(current) ? new : current
    }
}
