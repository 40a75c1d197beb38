/// A fast 64-bit hash of bytes for the engine's in-memory indexes (8 bytes per step), and the
/// byte equality that goes with it.
///
/// Not stable across versions and never persisted: the indexes are rebuilt when a snapshot is
/// restored. `Partitioning.stableHash` (FNV-1a, one byte per step) is the stable one; it costs
/// a dependent multiply per byte, about four times as long for a 36-byte message id.
enum ByteHash {
    /// The hash of a buffer's bytes.
    @inline(__always)
    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        let count = bytes.count
        var hash: UInt64 = 0x9e37_79b9_7f4a_7c15 ^ UInt64(truncatingIfNeeded: count)
        if count >= 8 {
            var offset = 0
            while offset &+ 8 <= count {
                hash = mix(hash, bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
                offset &+= 8
            }
            if offset < count {
                // The last 8 bytes, overlapping the words already mixed in.
                hash = mix(hash, bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self))
            }
        } else if count >= 4 {
            let low = UInt64(bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
            let high = UInt64(bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self))
            hash = mix(hash, low | high << 32)
        } else if count > 0 {
            var word: UInt64 = 0
            for i in 0..<count { word |= UInt64(bytes[i]) << (8 * UInt64(i)) }
            hash = mix(hash, word)
        }
        return finalize(hash)
    }

    /// The hash of a string's UTF-8 bytes.
    @inline(__always)
    static func hash(_ string: String) -> UInt64 {
        if let hash = string.utf8.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0)) }) {
            return hash
        }
        return Array(string.utf8).withUnsafeBytes { hash($0) }
    }

    /// Whether two buffers hold the same bytes.
    @inline(__always)
    static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let count = a.count
        guard count == b.count else { return false }
        guard count >= 8 else {
            for i in 0..<count where a[i] != b[i] { return false }
            return true
        }
        var offset = 0
        while offset &+ 8 <= count {
            if a.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                != b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            {
                return false
            }
            offset &+= 8
        }
        // The last 8 bytes, overlapping the words already compared.
        return offset == count
            || a.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
                == b.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    }

    @inline(__always)
    private static func mix(_ hash: UInt64, _ word: UInt64) -> UInt64 {
        let product = (hash ^ word) &* 0x9fb2_1c65_1e98_df25
        return product ^ (product >> 29)
    }

    /// MurmurHash3's fmix64: every input bit reaches the high bits the tables index with.
    @inline(__always)
    static func finalize(_ value: UInt64) -> UInt64 {
        var hash = value
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        hash &*= 0xc4ce_b9fe_1a85_ec53
        hash ^= hash >> 33
        return hash
    }
}
