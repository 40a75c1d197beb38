import ReceiptsCore

extension MessageStatus {
    /// A status of the size receiptd publishes for `event`, made without an engine: the
    /// wire-limit baseline encodes and publishes one per event, where receiptd derives one
    /// from its state.
    ///
    /// The fields carry the event's own strings (conversation, message, a user as the sender)
    /// and the counts and times a status at that step has, so the encoded update is as long as
    /// receiptd's for the same event.
    /// - Parameters:
    ///   - event: The event the update stands in for.
    ///   - now: The server time of the batch.
    init(standingInFor event: Event, at now: Timestamp) {
        var message = ""
        var sender = ""
        var status = ReceiptStatus.notDelivered
        switch event.kind {
        case .messageSent(_, let sent, let from, _, _, _):
            (message, sender) = (sent, from)
        case .delivered(_, let user, let delivered, _):
            (message, sender, status) = (delivered, user, .delivered)
        case .read(_, let user, let read, _):
            (message, sender, status) = (read ?? "", user, .readBySome)
        default:
            break
        }
        self.init(
            conversation: event.kind.conversation ?? "",
            message: message,
            sequence: event.id.sequence,
            sender: sender,
            sentAt: now,
            status: status,
            recipientCount: 4,
            deliveredCount: status == .notDelivered ? 0 : 4,
            readCount: status == .readBySome ? 2 : 0,
            deliveredAt: status == .notDelivered ? nil : now,
            readAt: status == .readBySome ? now : nil,
            isSystem: false,
            isEdited: false,
            isDeleted: false
        )
    }
}
