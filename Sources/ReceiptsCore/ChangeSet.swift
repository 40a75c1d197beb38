/// The (conversation, number) pairs an event changed, published afterwards: message sequences
/// whose status changed, or member slots whose read state changed.
///
/// The engine keeps one and reuses its storage from event to event: no allocation per event,
/// and clearing is setting a count (an array's `removeAll(keepingCapacity:)` is a generic
/// range replacement).
struct ChangeSet: Sendable {
    /// `conversation << 32 | sequence` in `storage[0..<count]`, in the order added (which is
    /// usually already sorted).
    private var storage: [UInt64] = []
    /// How many entries are in use.
    private(set) var count = 0
    /// The conversation index that `add` records numbers of.
    var conversation: UInt32 = 0

    var isEmpty: Bool { count == 0 }

    /// Entry `i` as stored: `conversation << 32 | sequence`.
    @inline(__always)
    func key(_ i: Int) -> UInt64 { storage[i] }

    /// Entry `i` as (conversation, sequence).
    @inline(__always)
    subscript(i: Int) -> (conversation: Int, sequence: UInt32) {
        let entry = storage[i]
        return (Int(truncatingIfNeeded: entry >> 32), UInt32(truncatingIfNeeded: entry))
    }

    /// Records that number `sequence` (a message sequence or a member slot) of `conversation` changed.
    @inline(__always)
    mutating func add(_ sequence: UInt32) {
        let entry = UInt64(conversation) << 32 | UInt64(sequence)
        if count < storage.count {
            storage[count] = entry
        } else {
            storage.append(entry)
        }
        count += 1
    }

    /// Forgets every entry, keeping the storage.
    mutating func removeAll() {
        count = 0
    }

    /// Puts the entries in increasing order without repeats (sorting only when needed).
    mutating func sortUnique() {
        guard count > 1 else { return }
        var ascending = true
        for i in 1..<count where storage[i] <= storage[i - 1] {
            ascending = false
            break
        }
        guard !ascending else { return }
        storage[0..<count].sort()
        var kept = 1
        for i in 1..<count where storage[i] != storage[kept - 1] {
            storage[kept] = storage[i]
            kept += 1
        }
        count = kept
    }
}
