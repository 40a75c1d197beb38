/// An open-addressing hash index of positions into an array kept elsewhere (message ids, members,
/// users, conversations), with entries only as wide as the positions need.
///
/// An entry is 0 (empty) or 1 + a position, 1 byte wide while the table has fewer than 256
/// entries, 2 bytes below 65,536, else 4; the width follows from the byte count alone, so the
/// whole table is one array (8 bytes inline). Any capacity works (buckets by multiply-shift, not
/// a power-of-two mask), so the load stays between 0.5 and 0.7: about 3.3 bytes per message id
/// in a conversation of up to 65,535 messages instead of the ~8 a power-of-two table of 4-byte
/// entries averages, and ~25 for a `Dictionary` bucket (SPEC §8).
struct SlotTable: Sendable {
    /// The entries' bytes.
    private var storage: [UInt8] = []

    /// An empty table (capacity 0: `find` returns nil).
    init() {}

    /// How many entries the table has room for.
    var capacity: Int {
        let bytes = storage.count
        return bytes < 256 ? bytes : bytes < 262_144 ? bytes >> 1 : bytes >> 2
    }

    /// Whether holding `count` positions needs a rebuild first (above 0.7 load).
    @inline(__always)
    func needsRebuild(forCount count: Int) -> Bool {
        count * 10 > capacity * 7
    }

    /// The position whose `matches` is true among those filed under `hash`, or nil.
    ///
    /// - Parameters:
    ///   - hash: The key's hash (its high 32 bits pick the bucket).
    ///   - matches: Whether the key at a position is the one searched for.
    @inline(__always)
    func find(hash: UInt64, where matches: (Int) -> Bool) -> Int? {
        storage.withUnsafeBytes { raw -> Int? in
            let bytes = raw.count
            if bytes == 0 { return nil }
            if bytes < 256 { return Self.find(raw.bindMemory(to: UInt8.self), hash: hash, matches) }
            if bytes < 262_144 { return Self.find(raw.bindMemory(to: UInt16.self), hash: hash, matches) }
            return Self.find(raw.bindMemory(to: UInt32.self), hash: hash, matches)
        }
    }

    /// Files `position` under `hash`; the table must have room (`needsRebuild` false).
    mutating func insert(hash: UInt64, position: Int) {
        storage.withUnsafeMutableBytes { raw in
            let bytes = raw.count
            if bytes < 256 {
                Self.insert(raw.bindMemory(to: UInt8.self), hash: hash, position: position)
            } else if bytes < 262_144 {
                Self.insert(raw.bindMemory(to: UInt16.self), hash: hash, position: position)
            } else {
                Self.insert(raw.bindMemory(to: UInt32.self), hash: hash, position: position)
            }
        }
    }

    /// Refiles positions `0..<count` at load 0.5 (empty for 0).
    ///
    /// - Parameters:
    ///   - count: How many positions.
    ///   - hash: The hash of the key at a position.
    mutating func rebuild(count: Int, hash: (Int) -> UInt64) {
        guard count > 0 else {
            storage = []
            return
        }
        let capacity = max(8, count * 2)
        let width = capacity < 256 ? 1 : capacity < 65_536 ? 2 : 4
        storage = Array(repeating: 0, count: capacity * width)
        for position in 0..<count { insert(hash: hash(position), position: position) }
    }

    @inline(__always)
    private static func bucket(_ hash: UInt64, capacity: Int) -> Int {
        Int(truncatingIfNeeded: ((hash >> 32) &* UInt64(capacity)) >> 32)
    }

    @inline(__always)
    private static func find<Entry: FixedWidthInteger & UnsignedInteger>(
        _ entries: UnsafeBufferPointer<Entry>,
        hash: UInt64,
        _ matches: (Int) -> Bool
    ) -> Int? {
        let capacity = entries.count
        var i = bucket(hash, capacity: capacity)
        while true {
            let entry = Int(entries[i])
            if entry == 0 { return nil }
            if matches(entry - 1) { return entry - 1 }
            i += 1
            if i == capacity { i = 0 }
        }
    }

    private static func insert<Entry: FixedWidthInteger & UnsignedInteger>(
        _ entries: UnsafeMutableBufferPointer<Entry>,
        hash: UInt64,
        position: Int
    ) {
        let capacity = entries.count
        var i = bucket(hash, capacity: capacity)
        while entries[i] != 0 {
            i += 1
            if i == capacity { i = 0 }
        }
        entries[i] = Entry(position + 1)
    }
}
