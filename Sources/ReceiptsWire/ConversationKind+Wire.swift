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

    /// Why a `conversation_upserted` with a kind that ``init(wire:)`` does not take is invalid.
    static func refusal(of wire: Receipts__V1__ConversationKind) -> String {
        wire == RECEIPTS__V1__CONVERSATION_KIND__CONVERSATION_KIND_UNSPECIFIED
            ? "conversation_upserted.kind is UNSPECIFIED: a conversation is DIRECT or GROUP"
            : "conversation_upserted.kind \(wire.rawValue) is not a kind this build knows: a conversation is DIRECT or GROUP"
    }

    var wire: Receipts__V1__ConversationKind {
        switch self {
        case .direct: RECEIPTS__V1__CONVERSATION_KIND__CONVERSATION_KIND_DIRECT
        case .group: RECEIPTS__V1__CONVERSATION_KIND__CONVERSATION_KIND_GROUP
        }
    }
}
