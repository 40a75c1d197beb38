/// Receipts that arrived before their message, held until it arrives or until they expire.
///
/// Bounded in count (whole engine) and in time, so a stream of receipts for messages that
/// never come cannot grow memory. Kept in arrival order so expiry only looks at the front.
struct PendingReceipts: Sendable {
    /// One held receipt.
    struct Receipt: Sendable, Hashable {
        /// Arrival order, unique.
        var serial: UInt64
        /// Conversation index.
        var conversation: UInt32
        /// The message it names.
        var message: String
        /// The user.
        var user: String
        /// `PendingReceipts.Kind` raw value: what the receipt will do when applied.
        var kind: UInt8
        /// The receipt's time: `now` when held, or the client time clamped to at most `now`.
        var time: Int64
        /// `now` when it was held: its lifetime counts from here.
        var heldAt: Int64
        /// The root sequence of the thread the receipt named, 0 if it named none: the message
        /// must arrive as a reply in that thread, or the receipt is discarded.
        var thread: UInt32 = 0
    }

    /// What a held receipt does when applied; whether a read is visible is fixed when it is
    /// held (and applied only if the user still shares reads then: privacy fails closed).
    enum Kind: UInt8, Sendable {
        case delivered = 0
        case privateRead = 1
        case visibleRead = 2
    }

    /// Which message a receipt waits for.
    struct Key: Hashable, Sendable {
        var conversation: UInt32
        var message: String
    }

    /// Held receipts by message, each list in arrival order.
    private(set) var byMessage: [Key: [Receipt]] = [:]
    /// (serial, key) in arrival order; entries already applied are skipped lazily and
    /// compacted away (`hold`, `take`), so this stays proportional to what is held.
    private var order: [(serial: UInt64, heldAt: Int64, key: Key)] = []
    private var head = 0
    /// Next serial.
    private(set) var nextSerial: UInt64 = 1
    /// How many are held.
    private(set) var count = 0

    init() {}

    /// Holds a receipt.
    mutating func hold(_ receipt: Receipt) {
        var receipt = receipt
        receipt.serial = nextSerial
        nextSerial += 1
        let key = Key(conversation: receipt.conversation, message: receipt.message)
        byMessage[key, default: []].append(receipt)
        if order.count - head > 4 * count + 1024 { compactOrder() }
        order.append((receipt.serial, receipt.heldAt, key))
        count += 1
    }

    /// Drops the entries of receipts already applied (amortised O(1) per hold).
    private mutating func compactOrder() {
        let live = order[head...].filter { entry in byMessage[entry.key]?.contains { $0.serial == entry.serial } == true
        }
        order = Array(live)
        head = 0
    }

    /// Removes and returns the receipts waiting for a message, in arrival order.
    mutating func take(conversation: UInt32, message: String) -> [Receipt] {
        guard let receipts = byMessage.removeValue(forKey: Key(conversation: conversation, message: message)) else {
            return []
        }
        count -= receipts.count
        if count == 0 {
            // Everything still queued for expiry was applied: forget it at once.
            order.removeAll()
            head = 0
        }
        return receipts
    }

    /// Drops receipts held for longer than `lifetime` at `now`; returns how many.
    mutating func expire(now: Int64, lifetime: Int64) -> Int {
        var dropped = 0
        while head < order.count {
            let entry = order[head]
            let (age, overflow) = now.subtractingReportingOverflow(entry.heldAt)
            guard !overflow && age > lifetime else { break }
            head += 1
            if var list = byMessage[entry.key], let i = list.firstIndex(where: { $0.serial == entry.serial }) {
                list.remove(at: i)
                byMessage[entry.key] = list.isEmpty ? nil : list
                count -= 1
                dropped += 1
            }
        }
        if head > 1024 && head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
        return dropped
    }

    /// Every held receipt in arrival order (for snapshots).
    var receiptsInOrder: [Receipt] {
        var result: [Receipt] = []
        result.reserveCapacity(count)
        for entry in order[head...] {
            if let receipt = byMessage[entry.key]?.first(where: { $0.serial == entry.serial }) {
                result.append(receipt)
            }
        }
        return result
    }

    /// Restores receipts (in arrival order, serials increasing) and the next serial.
    init(receipts: [Receipt], nextSerial: UInt64) {
        for receipt in receipts {
            let key = Key(conversation: receipt.conversation, message: receipt.message)
            byMessage[key, default: []].append(receipt)
            order.append((receipt.serial, receipt.heldAt, key))
        }
        count = receipts.count
        self.nextSerial = nextSerial
    }
}
