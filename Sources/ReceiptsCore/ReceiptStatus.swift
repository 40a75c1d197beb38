/// The receipt status of a message as its sender sees it (SPEC §4).
///
/// Ordered: a message's status only ever moves to a greater case.
public enum ReceiptStatus: UInt8, Hashable, Comparable, Sendable {
    /// A system message, or one with no recipients: never any receipts. Shows nothing.
    case none = 0
    /// Not delivered to every recipient and nobody read. Shows nothing.
    case notDelivered = 1
    /// Delivered to every recipient, nobody read. Shows "Delivered".
    case delivered = 2
    /// Group: at least one recipient read, not all. Shows "Read by some users".
    case readBySome = 3
    /// Direct: the recipient read it. Shows "Read at 5:42 PM".
    case read = 4
    /// Group: every recipient read. Shows "Read by all users".
    case readByAll = 5

    public static func < (lhs: ReceiptStatus, rhs: ReceiptStatus) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
