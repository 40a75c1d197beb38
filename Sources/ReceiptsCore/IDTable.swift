/// Ids (a conversation's message ids, the engine's conversation ids): an append-only byte arena
/// plus a compact hash index, instead of a `[String: Int]`.
///
/// A dictionary keyed by `String` costs a heap object per id longer than 15 bytes (UUIDs are
/// 36) plus its bucket; this layout costs the id's bytes, a 4-byte end offset and about
/// 3.3 bytes of index per id (`SlotTable`), which keeps a message within SPEC §8's 100 bytes.
/// Lookups compare bytes in the arena with the key's bytes: no string comparison, which for
/// two separately decoded copies of an id over 15 bytes takes Swift's slower path.
struct IDTable: Sendable {
    /// Every id's UTF-8 bytes, in order.
    private(set) var bytes: [UInt8] = []
    /// End offset in `bytes` of each id.
    private(set) var ends: [UInt32] = []
    /// Position in `ends` by the hash of the id.
    private var index = SlotTable()

    /// How many ids are stored.
    var count: Int { ends.count }

    /// The id at `position` of a table's arrays (a static function: callers pass the arrays as
    /// projections of the state that holds the table, which copies nothing; a method call on
    /// `conversations[c].messageIDs` would copy the table for the call).
    @inline(__always)
    static func id(at position: Int, bytes: [UInt8], ends: [UInt32]) -> String {
        let start = position == 0 ? 0 : Int(ends[position - 1])
        return bytes.withUnsafeBufferPointer { arena in
            String(decoding: UnsafeBufferPointer(rebasing: arena[start..<Int(ends[position])]), as: UTF8.self)
        }
    }

    /// The position of `id`, or nil.
    @inline(__always)
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

    private func hash(of position: Int) -> UInt64 {
        Self.hash(bytes, ends, position)
    }

    private static func hash(_ bytes: [UInt8], _ ends: [UInt32], _ position: Int) -> UInt64 {
        let start = position == 0 ? 0 : Int(ends[position - 1])
        return bytes.withUnsafeBytes {
            ByteHash.hash(UnsafeRawBufferPointer(rebasing: $0[start..<Int(ends[position])]))
        }
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
                        && ByteHash.equal(
                            UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(arena)[start..<start + count]),
                            UnsafeRawBufferPointer(key)
                        )
                }
            }
        }
    }

    private mutating func rebuildIndex() {
        let (bytes, ends) = (self.bytes, self.ends)
        index.rebuild(count: ends.count) { Self.hash(bytes, ends, $0) }
    }
}
