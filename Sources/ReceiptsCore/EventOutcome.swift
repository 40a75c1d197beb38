/// What applying one event did.
public enum EventOutcome: Hashable, Sendable {
    /// Applied; `held` when it is a receipt waiting for its message.
    case accepted(held: Bool)
    /// Applied before (same event id, inside its source's anti-replay window); nothing changed.
    case duplicate
    /// Not applied.
    case rejected(Rejection)
}

/// Why an event was rejected, with a human-readable detail.
public struct Rejection: Hashable, Sendable {
    /// The machine-readable reason.
    public var reason: RejectReason
    /// What exactly was wrong, for logs and gateway developers.
    public var detail: String
    /// With `.notOwner`: the worker ordinal that owns the conversation.
    public var ownerWorker: Int?

    public init(_ reason: RejectReason, _ detail: String, ownerWorker: Int? = nil) {
        self.reason = reason
        self.detail = detail
        self.ownerWorker = ownerWorker
    }
}

/// Why an event was rejected (mirrors `receipts.v1.RejectReason`).
public enum RejectReason: UInt8, Hashable, Sendable, CaseIterable {
    /// The event has no known kind.
    case unknownEventKind = 1
    /// A required field is missing or invalid.
    case invalidEvent = 2
    /// The conversation belongs to another worker.
    case notOwner = 3
    /// No such conversation.
    case unknownConversation = 4
    /// The user is not a member of the conversation.
    case notAMember = 5
    /// Only a recipient of the message can add a receipt to it.
    case notARecipient = 6
    /// The message id is already used in this conversation.
    case messageExists = 7
    /// The user's account was deleted.
    case userDeleted = 8
    /// The message is unknown and the receipts waiting for messages are at their bound.
    case pendingFull = 9
    /// The event id has no source or a zero sequence.
    case invalidEventID = 10
    /// The message is unknown (edit or delete of a message never sent).
    case unknownMessage = 11
    /// The conversation is moving between workers: the same event, sent again after a short
    /// pause, is applied once by whichever worker owns it then.
    case moving = 12
    /// The event id is below its source's anti-replay window: whether it was applied cannot
    /// be told, so it is not applied now, and not answered `duplicate` ("applied before"),
    /// which would lose a never-seen event silently.
    case outsideReplayWindow = 13

    /// A stable lowercase name for counters and logs, e.g. `not_a_recipient`.
    public var name: String {
        switch self {
        case .unknownEventKind: "unknown_event_kind"
        case .invalidEvent: "invalid_event"
        case .notOwner: "not_owner"
        case .unknownConversation: "unknown_conversation"
        case .notAMember: "not_a_member"
        case .notARecipient: "not_a_recipient"
        case .messageExists: "message_exists"
        case .userDeleted: "user_deleted"
        case .pendingFull: "pending_full"
        case .invalidEventID: "invalid_event_id"
        case .unknownMessage: "unknown_message"
        case .moving: "moving"
        case .outsideReplayWindow: "outside_replay_window"
        }
    }
}
