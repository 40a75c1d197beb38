import ReceiptsTestKit

/// The kit's SplitMix64 under the name these tests use, so that "random" tests are reproducible.
typealias SeededGenerator = SplitMix64
