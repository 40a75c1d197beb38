/// The message ids of one conversation: an append-only byte arena plus a compact hash index,
/// instead of a `[String: Int]`.
///
/// A dictionary keyed by `String` costs a heap object per id longer than 15 bytes (UUIDs are
/// 36) plus its bucket; this layout costs the id's bytes, a 4-byte end offset and about
/// 3.3 bytes of index per message (`SlotTable`), which keeps a message within SPEC §8's 100 bytes.
struct MessageIDTable: Sendable {
    /// Every id's UTF-8 bytes, in message order.
    private(set) var bytes: [UInt8] = []
    /// End offset in `bytes` of each id.
    private(set) var ends: [UInt32] = []
    /// Position in `ends` by the hash of the id.
    private var index = SlotTable()

    /// How many ids are stored.
    var count: Int { ends.count }

    /// The id at `position`.
    func id(at position: Int) -> String {
        bytes.withUnsafeBufferPointer { arena in
            String(decoding: UnsafeBufferPointer(rebasing: arena[range(of: position)]), as: UTF8.self)
        }
    }

    /// The position of `id`, or nil.
    func position(of id: String) -> Int? {
        if let found = id.utf8.withContiguousStorageIfAvailable({ lookUp($0) }) { return found }
        return Array(id.utf8).withUnsafeBufferPointer { lookUp($0) }
    }

    /// Appends an id that is not present yet.
    mutating func append(_ id: String) {
        bytes.reserveGently(id.utf8.count)
        bytes.append(contentsOf: id.utf8)
        ends.reserveGently(1)
        ends.append(UInt32(bytes.count))
        if index.needsRebuild(forCount: ends.count) {
            rebuildIndex()
        } else {
            let position = ends.count - 1
            index.insert(hash: hash(of: position), position: position)
        }
    }

    /// Removes the first `k` ids (retention drops a prefix of messages).
    mutating func removeFirst(_ k: Int) {
        guard k > 0 else { return }
        let cut = Int(ends[k - 1])
        // Fresh exact-size arrays: retention runs at compaction, the moment to give back the
        // slack that growth left behind.
        bytes = bytes[cut...].withUnsafeBufferPointer { Array($0) }
        ends = ends[k...].map { $0 - UInt32(cut) }
        rebuildIndex()
    }

    /// Restores a table from decoded arena bytes and end offsets (validated by the caller).
    init(bytes: [UInt8], ends: [UInt32]) {
        self.bytes = bytes
        self.ends = ends
        rebuildIndex()
    }

    /// An empty table.
    init() {}

    @inline(__always)
    private func range(of position: Int) -> Range<Int> {
        (position == 0 ? 0 : Int(ends[position - 1]))..<Int(ends[position])
    }

    private func hash(of position: Int) -> UInt64 {
        Self.hash(bytes, ends, position)
    }

    private static func hash(_ bytes: [UInt8], _ ends: [UInt32], _ position: Int) -> UInt64 {
        let start = position == 0 ? 0 : Int(ends[position - 1])
        return bytes.withUnsafeBytes { ByteHash.hash(UnsafeRawBufferPointer(rebasing: $0[start..<Int(ends[position])])) }
    }

    @inline(__always)
    private func lookUp(_ key: UnsafeBufferPointer<UInt8>) -> Int? {
        let hash = ByteHash.hash(UnsafeRawBufferPointer(key))
        return bytes.withUnsafeBufferPointer { arena in
            ends.withUnsafeBufferPointer { ends in
                index.find(hash: hash) { position in
                    let start = position == 0 ? 0 : Int(ends[position - 1])
                    let count = Int(ends[position]) - start
                    return count == key.count
                        && (count == 0 || memoryEqual(arena.baseAddress! + start, key.baseAddress!, count))
                }
            }
        }
    }

    private mutating func rebuildIndex() {
        let (bytes, ends) = (self.bytes, self.ends)
        index.rebuild(count: ends.count) { Self.hash(bytes, ends, $0) }
    }
}

/// Byte-wise equality of two buffers of `count` bytes.
@inline(__always)
private func memoryEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var i = 0
    while i + 8 <= count {
        let x = UnsafeRawPointer(a + i).loadUnaligned(as: UInt64.self)
        let y = UnsafeRawPointer(b + i).loadUnaligned(as: UInt64.self)
        if x != y { return false }
        i += 8
    }
    while i < count {
        if a[i] != b[i] { return false }
        i += 1
    }
    return true
}
