import CReceiptsProto
import ReceiptsCore

extension EventOutcome {
    /// The outcome from an unpacked `EventResult`.
    ///
    /// A rejection with an UNSPECIFIED or unknown reason reads as `.invalidEvent` with the
    /// peer's detail kept; an outcome this build does not know cannot be guessed and throws.
    init(wire result: Receipts__V1__EventResult) throws(WireError) {
        switch result.outcome {
        case RECEIPTS__V1__EVENT_OUTCOME__EVENT_OUTCOME_ACCEPTED:
            self = .accepted(held: result.held != 0)
        case RECEIPTS__V1__EVENT_OUTCOME__EVENT_OUTCOME_DUPLICATE:
            self = .duplicate
        case RECEIPTS__V1__EVENT_OUTCOME__EVENT_OUTCOME_REJECTED:
            let reason = RejectReason(wire: result.reason) ?? .invalidEvent
            self = .rejected(
                Rejection(
                    reason,
                    String(wire: result.detail),
                    ownerWorker: reason == .notOwner ? Int(result.owner_worker) : nil
                )
            )
        default:
            throw WireError(code: .invalidField, message: "EventResult.outcome \(result.outcome.rawValue) is not known")
        }
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__EventResult> {
        let result = arena.message(receipts__v1__event_result__init)
        switch self {
        case .accepted(let held):
            result.pointee.outcome = RECEIPTS__V1__EVENT_OUTCOME__EVENT_OUTCOME_ACCEPTED
            result.pointee.held = held ? 1 : 0
        case .duplicate:
            result.pointee.outcome = RECEIPTS__V1__EVENT_OUTCOME__EVENT_OUTCOME_DUPLICATE
        case .rejected(let rejection):
            result.pointee.outcome = RECEIPTS__V1__EVENT_OUTCOME__EVENT_OUTCOME_REJECTED
            result.pointee.reason = rejection.reason.wire
            result.pointee.detail = arena.cString(rejection.detail)
            if rejection.reason == .notOwner {
                result.pointee.owner_worker = UInt32(clamping: rejection.ownerWorker ?? 0)
            }
        }
        return result
    }
}
