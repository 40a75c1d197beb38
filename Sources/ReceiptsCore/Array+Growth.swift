extension Array {
    /// Makes room for `extra` more elements, growing by a quarter instead of doubling.
    ///
    /// The per-conversation arrays are many and mostly small to medium: doubling leaves on
    /// average a third of them empty, which alone would break SPEC §8's bytes-per-message
    /// budget. Growth by 1.25 stays amortised O(1) (each element is copied about 4 times).
    @inline(__always)
    mutating func reserveGently(_ extra: Int) {
        let needed = count + extra
        if needed > capacity {
            reserveCapacity(Swift.max(needed, count + count / 4 + 4))
        }
    }
}
