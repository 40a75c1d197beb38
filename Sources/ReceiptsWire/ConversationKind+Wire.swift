import CReceiptsProto
import ReceiptsCore

extension ConversationKind {
    /// The kind from the wire; nil for UNSPECIFIED or a number this build does not know.
    init?(wire: Receipts__V1__ConversationKind) {
        switch wire {
        case RECEIPTS__V1__CONVERSATION_KIND__CONVERSATION_KIND_DIRECT: self = .direct
        case RECEIPTS__V1__CONVERSATION_KIND__CONVERSATION_KIND_GROUP: self = .group
        default: return nil
        }
    }

    var wire: Receipts__V1__ConversationKind {
        switch self {
        case .direct: RECEIPTS__V1__CONVERSATION_KIND__CONVERSATION_KIND_DIRECT
        case .group: RECEIPTS__V1__CONVERSATION_KIND__CONVERSATION_KIND_GROUP
        }
    }
}
