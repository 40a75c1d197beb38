import CReceiptsProto
import ReceiptsCore

extension RecipientState {
    /// The state from the wire; UNSPECIFIED and unknown numbers read as `.notDelivered`,
    /// the state that claims nothing.
    init(wire: Receipts__V1__RecipientState) {
        switch wire {
        case RECEIPTS__V1__RECIPIENT_STATE__RECIPIENT_STATE_READ: self = .read
        case RECEIPTS__V1__RECIPIENT_STATE__RECIPIENT_STATE_DELIVERED: self = .delivered
        default: self = .notDelivered
        }
    }

    var wire: Receipts__V1__RecipientState {
        switch self {
        case .read: RECEIPTS__V1__RECIPIENT_STATE__RECIPIENT_STATE_READ
        case .delivered: RECEIPTS__V1__RECIPIENT_STATE__RECIPIENT_STATE_DELIVERED
        case .notDelivered: RECEIPTS__V1__RECIPIENT_STATE__RECIPIENT_STATE_NOT_DELIVERED
        }
    }
}
