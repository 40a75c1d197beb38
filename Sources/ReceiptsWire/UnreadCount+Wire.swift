import CReceiptsProto
import ReceiptsCore

extension UnreadCount {
    init(wire count: Receipts__V1__UnreadCount) {
        self.init(
            conversation: String(wire: count.conversation_id),
            unread: Int(count.unread),
            isMarkedUnread: count.marked_unread != 0,
            readUpTo: count.read_up_to_sequence,
            hasLeft: count.left != 0,
            unreadMentions: Int(count.unread_mentions)
        )
    }

    /// The count as a C message; `unread` and `unreadMentions` are clamped into `uint32`.
    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__UnreadCount> {
        let count = arena.message(receipts__v1__unread_count__init)
        count.pointee.conversation_id = arena.cString(conversation)
        count.pointee.unread = UInt32(clamping: unread)
        count.pointee.marked_unread = isMarkedUnread ? 1 : 0
        count.pointee.read_up_to_sequence = readUpTo
        count.pointee.left = hasLeft ? 1 : 0
        count.pointee.unread_mentions = UInt32(clamping: unreadMentions)
        return count
    }
}
