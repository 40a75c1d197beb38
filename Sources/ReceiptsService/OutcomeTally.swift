import Logging
import ReceiptsCore

/// Counts one batch's outcomes locally, so the shared counters are touched once per batch
/// and kind instead of once per event.
struct OutcomeTally {
    private(set) var accepted = 0
    private var held = 0
    private var duplicates = 0
    private var rejected: [RejectReason: Int] = [:]

    /// Adds one event's outcome; rejections are also logged at debug level with their detail.
    mutating func add(_ outcome: EventOutcome, logger: Logger) {
        switch outcome {
        case .accepted(let isHeld):
            accepted += 1
            if isHeld { held += 1 }
        case .duplicate:
            duplicates += 1
        case .rejected(let rejection):
            rejected[rejection.reason, default: 0] += 1
            logger.debug(
                "event rejected",
                metadata: ["event.reason": "\(rejection.reason.name)", "event.detail": "\(rejection.detail)"]
            )
        }
    }

    /// Adds the batch's totals to the service counters.
    func report(to counters: ServiceCounters, _ handles: HotCounters) {
        counters.increment(handles.eventsAccepted, by: accepted)
        counters.increment(handles.eventsHeld, by: held)
        counters.increment(handles.eventsDuplicate, by: duplicates)
        for (reason, count) in rejected {
            counters.increment(.eventsRejected, label: reason.name, by: count)
        }
    }
}
