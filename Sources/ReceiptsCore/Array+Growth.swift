extension Array {
    /// Makes room for `extra` more elements, growing by an eighth instead of doubling.
    ///
    /// The per-conversation arrays are many and mostly small to medium: doubling leaves on
    /// average a third of them empty, which alone would break SPEC §8's bytes-per-message
    /// budget; growth by 1.125 leaves about 6%. It stays amortised O(1): each element is
    /// copied about 9 times, a few nanoseconds for the 32-byte message records.
    @inline(__always)
    mutating func reserveGently(_ extra: Int) {
        let needed = count + extra
        if needed > capacity {
            reserveCapacity(Swift.max(needed, count + count / 8 + 4))
        }
    }
}
