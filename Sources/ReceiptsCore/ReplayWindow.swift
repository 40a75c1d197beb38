/// Per-source anti-replay state, as in IPsec (RFC 4303 §3.4.3): the highest sequence seen plus
/// a bitmap of the `size` sequences below it.
///
/// Memory stays bounded per source however many events it sends; the price is that a
/// sequence older than the window cannot be told apart: it may or may not have been seen.
struct ReplayWindow: Sendable, Hashable {
    /// What the window knows of a sequence.
    enum Verdict: Sendable, Hashable {
        /// Not seen: above the highest, or within the window and not recorded.
        case new
        /// Within the window and recorded.
        case seen
        /// Older than the window: whether it was seen is no longer known.
        case belowWindow
    }

    /// The highest accepted sequence (0 before the first).
    var highest: UInt64 = 0
    /// Ring bitmap: bit `s % size` is set when sequence `s` (within the window) was accepted.
    var bits: [UInt64]

    /// A window remembering `size` sequences (rounded up to a multiple of 64, at least 64).
    init(size: UInt64) {
        let words = Int(min(max((size + 63) / 64, 1), 1 << 20))
        bits = Array(repeating: 0, count: words)
    }

    /// Restores a window (validated by the caller).
    init(highest: UInt64, bits: [UInt64]) {
        self.highest = highest
        self.bits = bits
    }

    /// How many sequences it remembers, the highest included.
    var size: UInt64 { UInt64(bits.count) * 64 }

    /// The bit of `sequence` in the ring (a mask instead of a division for the usual
    /// power-of-two sizes such as the default 4096).
    @inline(__always)
    private func bit(_ sequence: UInt64) -> UInt64 {
        let size = size
        return size & (size - 1) == 0 ? sequence & (size - 1) : sequence % size
    }

    /// What the window knows of `sequence`.
    @inline(__always)
    func verdict(_ sequence: UInt64) -> Verdict {
        if sequence > highest { return .new }
        if highest - sequence >= size { return .belowWindow }
        let bit = bit(sequence)
        return bits[Int(bit / 64)] & (1 << (bit % 64)) != 0 ? .seen : .new
    }

    /// Records an accepted sequence (whose verdict was `.new`).
    mutating func record(_ sequence: UInt64) {
        if sequence > highest {
            if sequence - highest >= size {
                for i in bits.indices { bits[i] = 0 }
            } else {
                var s = highest + 1
                while s < sequence {
                    let bit = bit(s)
                    bits[Int(bit / 64)] &= ~(1 << (bit % 64))
                    s += 1
                }
            }
            highest = sequence
        }
        let bit = bit(sequence)
        bits[Int(bit / 64)] |= 1 << (bit % 64)
    }
}
