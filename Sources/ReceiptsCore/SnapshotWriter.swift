/// Appends little-endian fixed-width values to a byte buffer (the snapshot format's writer).
struct SnapshotWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) {
        bytes.reserveCapacity(capacity)
    }

    @inline(__always)
    mutating func write<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always)
    mutating func write(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    /// A length-prefixed UTF-8 string.
    mutating func write(_ value: String) {
        write(UInt32(value.utf8.count))
        bytes.append(contentsOf: value.utf8)
    }

    /// A length-prefixed byte array.
    mutating func write(bytes value: [UInt8]) {
        write(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    /// A length-prefixed array of `UInt32`.
    mutating func write(_ values: [UInt32]) {
        write(UInt32(values.count))
        for value in values { write(value) }
    }

    /// Appends the checksum of everything written so far.
    mutating func seal() {
        let sum = bytes.withUnsafeBytes { SnapshotWriter.checksum($0) }
        write(sum)
    }

    /// A fast 64-bit checksum (word-wise multiply-xor): detects torn or flipped bytes; not a MAC.
    static func checksum(_ raw: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0x9e37_79b9_7f4a_7c15 ^ UInt64(raw.count)
        var offset = 0
        while offset + 8 <= raw.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            hash = (hash ^ word) &* 0x0000_0100_0000_01b3
            hash ^= hash >> 31
            offset += 8
        }
        while offset < raw.count {
            hash = (hash ^ UInt64(raw[offset])) &* 0x0000_0100_0000_01b3
            offset += 1
        }
        return hash ^ (hash >> 29)
    }
}
