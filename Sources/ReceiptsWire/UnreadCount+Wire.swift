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
            unreadMentions: Int(count.unread_mentions),
            unreadThreads: Int(count.unread_threads)
        )
    }

    /// The count as a C message; the counts are clamped into `uint32`.
    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__UnreadCount> {
        let count = arena.message(receipts__v1__unread_count__init)
        count.pointee.conversation_id = arena.cString(conversation)
        count.pointee.unread = UInt32(clamping: unread)
        count.pointee.marked_unread = isMarkedUnread ? 1 : 0
        count.pointee.read_up_to_sequence = readUpTo
        count.pointee.left = hasLeft ? 1 : 0
        count.pointee.unread_mentions = UInt32(clamping: unreadMentions)
        count.pointee.unread_threads = UInt32(clamping: unreadThreads)
        return count
    }
}

extension ThreadReadState {
    init(wire state: Receipts__V1__ThreadReadState) {
        self.init(
            conversation: String(wire: state.conversation_id),
            thread: String(wire: state.thread_root_id),
            unread: Int(state.unread),
            unreadMentions: Int(state.unread_mentions),
            readUpTo: state.read_up_to_sequence,
            isFollowing: state.following != 0,
            hasLeft: state.left != 0
        )
    }

    /// The state as a C message; the counts are clamped into `uint32`.
    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__ThreadReadState> {
        let state = arena.message(receipts__v1__thread_read_state__init)
        state.pointee.conversation_id = arena.cString(conversation)
        state.pointee.thread_root_id = arena.cString(thread)
        state.pointee.unread = UInt32(clamping: unread)
        state.pointee.unread_mentions = UInt32(clamping: unreadMentions)
        state.pointee.read_up_to_sequence = readUpTo
        state.pointee.following = isFollowing ? 1 : 0
        state.pointee.left = hasLeft ? 1 : 0
        return state
    }
}
