/// Reads little-endian fixed-width values with a bounds check on every read, so truncated
/// or garbage input throws instead of crashing.
struct SnapshotReader: ~Copyable {
    private let raw: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ raw: UnsafeRawBufferPointer) {
        self.raw = raw
    }

    var remaining: Int { raw.count - offset }

    @inline(__always)
    mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) throws(SnapshotDecodingError) -> T {
        let size = MemoryLayout<T>.size
        guard raw.count - offset >= size else { throw truncated() }
        let value = T(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: T.self))
        offset += size
        return value
    }

    mutating func readBool() throws(SnapshotDecodingError) -> Bool {
        switch try read(UInt8.self) {
        case 0: return false
        case 1: return true
        default: throw corrupt("a flag is neither 0 nor 1")
        }
    }

    /// A count of items of at least `itemSize` bytes each: checked against what remains, so a
    /// garbage count cannot make the decoder allocate gigabytes.
    mutating func readCount(itemSize: Int) throws(SnapshotDecodingError) -> Int {
        let count = Int(try read(UInt32.self))
        guard count <= remaining / max(itemSize, 1) else { throw truncated() }
        return count
    }

    mutating func readString() throws(SnapshotDecodingError) -> String {
        let count = try readCount(itemSize: SnapshotItemSize.byte)
        let string = String(decoding: UnsafeRawBufferPointer(rebasing: raw[offset..<offset + count]), as: UTF8.self)
        offset += count
        return string
    }

    mutating func readBytes() throws(SnapshotDecodingError) -> [UInt8] {
        let count = try readCount(itemSize: SnapshotItemSize.byte)
        let bytes = [UInt8](UnsafeRawBufferPointer(rebasing: raw[offset..<offset + count]))
        offset += count
        return bytes
    }

    mutating func readUInt32s() throws(SnapshotDecodingError) -> [UInt32] {
        var values = [UInt32]()
        try appendUInt32s(to: &values)
        return values
    }

    /// Appends a length-prefixed array of `UInt32` to `values`: many short arrays decoded into
    /// one allocation.
    mutating func appendUInt32s(to values: inout [UInt32]) throws(SnapshotDecodingError) {
        let count = try readCount(itemSize: SnapshotItemSize.uint32)
        // The count is checked against what remains, so the loop reads without a bounds check
        // per value.
        values.reserveGently(count)
        for i in 0..<count {
            values.append(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset + 4 * i, as: UInt32.self)))
        }
        offset += 4 * count
    }

    func truncated() -> SnapshotDecodingError {
        SnapshotDecodingError(.truncated, "the snapshot ends at byte \(raw.count) inside a value at byte \(offset)")
    }

    func corrupt(_ what: String) -> SnapshotDecodingError {
        SnapshotDecodingError(.corrupt, "\(what) (near byte \(offset))")
    }
}
