import CReceiptsProto
import ReceiptsCore

extension MessageStatus {
    /// The status from the wire; a NULL (absent) message reads as the proto3 default.
    /// Counts beyond `Int` cannot occur on 64-bit platforms (they are `uint32` on the wire).
    init(wire status: Receipts__V1__MessageStatus?) {
        guard let status else {
            self.init(
                conversation: "",
                message: "",
                sequence: 0,
                sender: "",
                sentAt: Timestamp(milliseconds: 0),
                status: .none,
                recipientCount: 0,
                deliveredCount: 0,
                readCount: 0,
                deliveredAt: nil,
                readAt: nil,
                isSystem: false,
                isEdited: false,
                isDeleted: false
            )
            return
        }
        self.init(
            conversation: String(wire: status.conversation_id),
            message: String(wire: status.message_id),
            sequence: status.message_sequence,
            sender: String(wire: status.sender_id),
            sentAt: Timestamp(milliseconds: status.sent_at_ms),
            status: ReceiptStatus(wire: status.status),
            recipientCount: Int(status.recipient_count),
            deliveredCount: Int(status.delivered_count),
            readCount: Int(status.read_count),
            deliveredAt: Timestamp?(wire: status.delivered_at_ms),
            readAt: Timestamp?(wire: status.read_at_ms),
            isSystem: status.system != 0,
            isEdited: status.edited != 0,
            isDeleted: status.deleted != 0,
            threadRoot: String(wire: status.thread_root_id).nonEmpty
        )
    }

    /// The display text carried next to a status in query replies; "" when absent.
    static func displayText(wire status: Receipts__V1__MessageStatus?) -> String {
        String(wire: status?.display_text)
    }

    /// The status as a C message; counts are clamped into `uint32`. An empty display text
    /// stays protobuf-c's shared empty string (proto3 leaves it off the wire either way).
    func build(displayText: String, in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__MessageStatus> {
        let status = arena.message(receipts__v1__message_status__init)
        status.pointee.conversation_id = arena.cString(conversation)
        status.pointee.message_id = arena.cString(message)
        status.pointee.message_sequence = sequence
        status.pointee.sender_id = arena.cString(sender)
        status.pointee.sent_at_ms = sentAt.milliseconds
        status.pointee.status = self.status.wire
        status.pointee.recipient_count = UInt32(clamping: recipientCount)
        status.pointee.delivered_count = UInt32(clamping: deliveredCount)
        status.pointee.read_count = UInt32(clamping: readCount)
        status.pointee.delivered_at_ms = deliveredAt.wire
        status.pointee.read_at_ms = readAt.wire
        status.pointee.system = isSystem ? 1 : 0
        status.pointee.edited = isEdited ? 1 : 0
        status.pointee.deleted = isDeleted ? 1 : 0
        if !displayText.isEmpty {
            status.pointee.display_text = arena.cString(displayText)
        }
        if let threadRoot { status.pointee.thread_root_id = arena.cString(threadRoot) }
        return status
    }
}
