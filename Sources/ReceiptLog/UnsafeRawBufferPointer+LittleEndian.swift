extension UnsafeRawBufferPointer {
    /// Reads a little-endian integer at a byte offset that need not be aligned.
    @inline(__always)
    func littleEndian<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) -> T {
        T(littleEndian: self.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
