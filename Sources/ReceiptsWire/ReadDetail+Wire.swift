import CReceiptsProto
import ReceiptsCore

extension ReadDetail {
    /// The sheet from the wire; an absent one reads as the proto3 default (no recipients).
    init(wire detail: Receipts__V1__ReadDetail?) {
        let nextCursor = String(wire: detail?.next_cursor)
        self.init(
            status: MessageStatus(wire: detail?.status?.pointee),
            read: RecipientReceipt.array(wire: detail?.read, count: detail?.n_read ?? 0),
            delivered: RecipientReceipt.array(wire: detail?.delivered, count: detail?.n_delivered ?? 0),
            notDelivered: RecipientReceipt.array(wire: detail?.not_delivered, count: detail?.n_not_delivered ?? 0),
            nextCursor: nextCursor.isEmpty ? nil : nextCursor
        )
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__ReadDetail> {
        let detail = arena.message(receipts__v1__read_detail__init)
        detail.pointee.status = status.build(displayText: "", in: &arena)
        (detail.pointee.n_read, detail.pointee.read) = arena.messages(read) { $0.build(in: &$1) }
        (detail.pointee.n_delivered, detail.pointee.delivered) = arena.messages(delivered) { $0.build(in: &$1) }
        (detail.pointee.n_not_delivered, detail.pointee.not_delivered) = arena.messages(notDelivered) {
            $0.build(in: &$1)
        }
        detail.pointee.next_cursor = arena.cString(nextCursor ?? "")
        return detail
    }
}

extension RecipientReceipt {
    init(wire receipt: Receipts__V1__RecipientReceipt) {
        self.init(
            user: String(wire: receipt.user_id),
            state: RecipientState(wire: receipt.state),
            deliveredAt: Timestamp?(wire: receipt.delivered_at_ms),
            readAt: Timestamp?(wire: receipt.read_at_ms),
            isUserDeleted: receipt.user_deleted != 0,
            hasLeft: receipt.left != 0
        )
    }

    static func array(
        wire pointers: UnsafeMutablePointer<UnsafeMutablePointer<Receipts__V1__RecipientReceipt>?>?,
        count: Int
    ) -> [RecipientReceipt] {
        [RecipientReceipt](wire: pointers, count: count) { RecipientReceipt(wire: $0) }
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__RecipientReceipt> {
        let receipt = arena.message(receipts__v1__recipient_receipt__init)
        receipt.pointee.user_id = arena.cString(user)
        receipt.pointee.state = state.wire
        receipt.pointee.delivered_at_ms = deliveredAt.wire
        receipt.pointee.read_at_ms = readAt.wire
        receipt.pointee.user_deleted = isUserDeleted ? 1 : 0
        receipt.pointee.left = hasLeft ? 1 : 0
        return receipt
    }
}
