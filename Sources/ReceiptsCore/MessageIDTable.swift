/// The message ids of one conversation: an append-only byte arena plus an open-addressing
/// hash index, instead of a `[String: Int]`.
///
/// A dictionary keyed by `String` costs a heap object per id longer than 15 bytes (UUIDs are
/// 36) plus its bucket; this layout costs the id's bytes, a 4-byte end offset and about
/// 6 bytes of index per message, which keeps a message within SPEC §8's 100 bytes.
struct MessageIDTable: Sendable {
    /// Every id's UTF-8 bytes, in message order.
    private(set) var bytes: [UInt8] = []
    /// End offset in `bytes` of each id.
    private(set) var ends: [UInt32] = []
    /// Open-addressing index: 0 = empty, else 1 + position in `ends`. Count is a power of two.
    private var slots: [UInt32] = []

    /// How many ids are stored.
    var count: Int { ends.count }

    /// The id at `position`.
    func id(at position: Int) -> String {
        let start = position == 0 ? 0 : Int(ends[position - 1])
        return String(decoding: bytes[start..<Int(ends[position])], as: UTF8.self)
    }

    /// The position of `id`, or nil.
    func position(of id: String) -> Int? {
        guard !slots.isEmpty else { return nil }
        if let found = id.utf8.withContiguousStorageIfAvailable({ lookUp($0) }) { return found }
        return Array(id.utf8).withUnsafeBufferPointer { lookUp($0) }
    }

    /// Appends an id that is not present yet.
    mutating func append(_ id: String) {
        bytes.reserveGently(id.utf8.count)
        bytes.append(contentsOf: id.utf8)
        ends.reserveGently(1)
        ends.append(UInt32(bytes.count))
        if (ends.count + 1) * 10 > slots.count * 7 {
            rebuildIndex(capacity: max(16, slots.count * 2))
        } else {
            insert(position: ends.count - 1)
        }
    }

    /// Removes the first `k` ids (retention drops a prefix of messages).
    mutating func removeFirst(_ k: Int) {
        guard k > 0 else { return }
        let cut = Int(ends[k - 1])
        // Fresh exact-size arrays: retention runs at compaction, the moment to give back the
        // slack that growth by doubling left behind.
        bytes = bytes[cut...].withUnsafeBufferPointer { Array($0) }
        ends = ends[k...].map { $0 - UInt32(cut) }
        var capacity = 16
        while (ends.count + 1) * 10 > capacity * 7 { capacity *= 2 }
        rebuildIndex(capacity: capacity)
    }

    /// Restores a table from decoded arena bytes and end offsets (validated by the caller).
    init(bytes: [UInt8], ends: [UInt32]) {
        self.bytes = bytes
        self.ends = ends
        var capacity = 16
        while (ends.count + 1) * 10 > capacity * 7 { capacity *= 2 }
        rebuildIndex(capacity: ends.isEmpty ? 0 : capacity)
    }

    /// An empty table.
    init() {}

    private func range(of position: Int) -> Range<Int> {
        (position == 0 ? 0 : Int(ends[position - 1]))..<Int(ends[position])
    }

    private static func hash(_ buffer: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in buffer {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash ^ (hash >> 29)
    }

    private func lookUp(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: Self.hash(key)) & mask
        return bytes.withUnsafeBufferPointer { arena in
            while true {
                let entry = slots[slot]
                if entry == 0 { return nil }
                let position = Int(entry) - 1
                let range = range(of: position)
                if range.count == key.count
                    && (key.isEmpty || memoryEqual(arena.baseAddress! + range.lowerBound, key.baseAddress!, key.count))
                {
                    return position
                }
                slot = (slot + 1) & mask
            }
        }
    }

    private mutating func insert(position: Int) {
        let mask = slots.count - 1
        let range = range(of: position)
        var slot = bytes.withUnsafeBufferPointer { arena in
            Int(truncatingIfNeeded: Self.hash(UnsafeBufferPointer(rebasing: arena[range]))) & mask
        }
        while slots[slot] != 0 { slot = (slot + 1) & mask }
        slots[slot] = UInt32(position + 1)
    }

    private mutating func rebuildIndex(capacity: Int) {
        slots = Array(repeating: 0, count: capacity)
        guard capacity > 0 else { return }
        for position in ends.indices { insert(position: position) }
    }
}

/// Byte-wise equality of two buffers of `count` bytes.
@inline(__always)
private func memoryEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var i = 0
    while i < count {
        if a[i] != b[i] { return false }
        i += 1
    }
    return true
}
