import ReceiptLog
import ReceiptsCore

/// A `send` call the loop has taken: its outcomes so far and who waits for them.
///
/// A class owned by the loop thread, so that settling one event changes one slot in place
/// (a struct taken out of the loop's dictionary would copy every outcome, per event).
final class SendState {
    /// The caller's continuation; nil once the caller stopped waiting (cancelled), while the
    /// events still go out and are acknowledged.
    var reply: Reply<[EventOutcome]>?
    var outcomes: [EventOutcome?]
    /// Slots not yet answered (an event without a conversation goes to every worker).
    var remaining: Int
    /// Set when the send was refused as a whole; answered once every slot is settled.
    var failure: ReceiptsClientError?
    /// Where the events' outbox record ends (they leave once it is durable); nil for sends
    /// not in the outbox.
    let outboxPosition: LogPosition?
    /// The ids to tell the outbox about once answered; empty for sends not in the outbox.
    let outboxIDs: [EventID]

    init(reply: Reply<[EventOutcome]>?, events: [Event], outboxPosition: LogPosition?) {
        self.reply = reply
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
