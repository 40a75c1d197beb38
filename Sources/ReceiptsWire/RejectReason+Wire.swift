import CReceiptsProto
import ReceiptsCore

extension RejectReason {
    /// The reason from the wire; nil for UNSPECIFIED or a number this build does not know.
    init?(wire: Receipts__V1__RejectReason) {
        switch wire {
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_UNKNOWN_EVENT_KIND: self = .unknownEventKind
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_INVALID_EVENT: self = .invalidEvent
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_NOT_OWNER: self = .notOwner
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_UNKNOWN_CONVERSATION: self = .unknownConversation
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_NOT_A_MEMBER: self = .notAMember
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_NOT_A_RECIPIENT: self = .notARecipient
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_MESSAGE_EXISTS: self = .messageExists
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_USER_DELETED: self = .userDeleted
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_PENDING_FULL: self = .pendingFull
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_INVALID_EVENT_ID: self = .invalidEventID
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_UNKNOWN_MESSAGE: self = .unknownMessage
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_MOVING: self = .moving
        case RECEIPTS__V1__REJECT_REASON__REJECT_REASON_OUTSIDE_REPLAY_WINDOW: self = .outsideReplayWindow
        default: return nil
        }
    }

    var wire: Receipts__V1__RejectReason {
        switch self {
        case .unknownEventKind: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_UNKNOWN_EVENT_KIND
        case .invalidEvent: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_INVALID_EVENT
        case .notOwner: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_NOT_OWNER
        case .unknownConversation: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_UNKNOWN_CONVERSATION
        case .notAMember: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_NOT_A_MEMBER
        case .notARecipient: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_NOT_A_RECIPIENT
        case .messageExists: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_MESSAGE_EXISTS
        case .userDeleted: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_USER_DELETED
        case .pendingFull: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_PENDING_FULL
        case .invalidEventID: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_INVALID_EVENT_ID
        case .unknownMessage: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_UNKNOWN_MESSAGE
        case .moving: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_MOVING
        case .outsideReplayWindow: RECEIPTS__V1__REJECT_REASON__REJECT_REASON_OUTSIDE_REPLAY_WINDOW
        }
    }
}
