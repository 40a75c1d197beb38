/// A message's receipt state as everyone except the recipients' own devices see it:
/// reads of users who share no reads are shown as deliveries.
public struct MessageStatus: Hashable, Sendable {
    /// The conversation.
    public var conversation: String
    /// The message.
    public var message: String
    /// The message's per-conversation sequence number, starting at 1.
    public var sequence: UInt64
    /// Who sent it.
    public var sender: String {
        get {
            guard threadRootStart >= 0 else { return senderAndThreadRoot }
            return String(decoding: senderAndThreadRoot.utf8.prefix(Int(threadRootStart)), as: UTF8.self)
        }
        set { (senderAndThreadRoot, threadRootStart) = Self.pack(sender: newValue, threadRoot: threadRoot) }
    }
    /// Server time it was sent.
    public var sentAt: Timestamp
    /// The status.
    public var status: ReceiptStatus
    /// Recipients that count: members at send time minus the sender, minus those
    /// who left or were deleted before reading.
    public var recipientCount: Int
    /// How many of them have it delivered (read counts as delivered).
    public var deliveredCount: Int
    /// How many of them visibly read it.
    public var readCount: Int
    /// When it became delivered to every recipient.
    public var deliveredAt: Timestamp?
    /// Direct: when the recipient read it. Group: when the first recipient read it.
    public var readAt: Timestamp?
    /// A system message: never any receipts.
    public var isSystem: Bool
    /// The message was edited (receipts preserved).
    public var isEdited: Bool
    /// The message was deleted (receipts preserved).
    public var isDeleted: Bool
    /// For a reply in a thread: the thread's root message.
    public var threadRoot: String? {
        get {
            guard threadRootStart >= 0 else { return nil }
            return String(decoding: senderAndThreadRoot.utf8.dropFirst(Int(threadRootStart)), as: UTF8.self)
        }
        set { (senderAndThreadRoot, threadRootStart) = Self.pack(sender: sender, threadRoot: newValue) }
    }
    /// The sender's id, followed for a thread reply by its root's id; `threadRootStart` is where
    /// the root's UTF-8 begins (-1 for a main-timeline message: 4 bytes, in the padding after
    /// the flags, so that a status is no larger than before threads).
    ///
    /// One stored string for the two: a fourth reference-counted field made every copy of a
    /// status go through the type's value witnesses (an indirect call), which cost a thread-less
    /// workload 80 ns per applied event (`Engine.apply.direct`, 590 against 493 ns).
    private var senderAndThreadRoot: String
    private var threadRootStart: Int32

    public init(
        conversation: String,
        message: String,
        sequence: UInt64,
        sender: String,
        sentAt: Timestamp,
        status: ReceiptStatus,
        recipientCount: Int,
        deliveredCount: Int,
        readCount: Int,
        deliveredAt: Timestamp?,
        readAt: Timestamp?,
        isSystem: Bool,
        isEdited: Bool,
        isDeleted: Bool,
        threadRoot: String? = nil
    ) {
        self.conversation = conversation
        self.message = message
        self.sequence = sequence
        (senderAndThreadRoot, threadRootStart) = Self.pack(sender: sender, threadRoot: threadRoot)
        self.sentAt = sentAt
        self.status = status
        self.recipientCount = recipientCount
        self.deliveredCount = deliveredCount
        self.readCount = readCount
        self.deliveredAt = deliveredAt
        self.readAt = readAt
        self.isSystem = isSystem
        self.isEdited = isEdited
        self.isDeleted = isDeleted
    }

    /// The stored form of a sender and a thread root (see `senderAndThreadRoot`).
    private static func pack(sender: String, threadRoot: String?) -> (String, Int32) {
        guard let threadRoot else { return (sender, -1) }
        return (sender + threadRoot, Int32(sender.utf8.count))
    }
}
