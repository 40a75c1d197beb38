import ReceiptsCore

/// Identifies the status update one workload event must cause: (conversation, message,
/// delivered count, read count) packed into 64 bits.
///
/// In the generated workload every accepted event changes exactly one message's counts to a
/// combination no other event produces, so the update's counts name the event that caused it
/// and its send time, without any id travelling through the service.
enum UpdateKey {
    /// Packs the four numbers: 24 bits of conversation, 20 of message, 10 and 10 of counts.
    static func make(conversation: Int, message: Int, delivered: Int, read: Int) -> UInt64 {
        UInt64(conversation & 0xFF_FFFF) << 40 | UInt64(message & 0xF_FFFF) << 20
            | UInt64(delivered & 0x3FF) << 10 | UInt64(read & 0x3FF)
    }

    /// The key of a published status, or nil if its ids are not the generator's (`c<n>`, `m<n>`).
    static func make(_ status: MessageStatus) -> UInt64? {
        guard let conversation = number(after: UInt8(ascii: "c"), in: status.conversation),
            let message = number(after: UInt8(ascii: "m"), in: status.message)
        else { return nil }
        return make(
            conversation: conversation,
            message: message,
            delivered: status.deliveredCount,
            read: status.readCount
        )
    }

    private static func number(after prefix: UInt8, in text: String) -> Int? {
        var value = 0
        var utf8 = text.utf8.makeIterator()
        guard utf8.next() == prefix else { return nil }
        var digits = 0
        while let byte = utf8.next() {
            guard (48...57).contains(byte) else { return nil }
            value = value * 10 + Int(byte - 48)
            digits += 1
        }
        return digits > 0 ? value : nil
    }
}
