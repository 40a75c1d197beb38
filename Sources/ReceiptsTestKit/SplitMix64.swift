/// SplitMix64 (Steele, Lea and Flood 2014): a small, fast, seedable random number generator.
///
/// Equal seeds give equal sequences, so a randomized test that fails can be run again exactly,
/// and every run of a load-generator workload with the same seed produces the same events (and
/// so the same frames for every baseline).
package struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// Creates a generator; equal seeds give equal sequences.
    package init(seed: UInt64) {
        state = seed
    }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
