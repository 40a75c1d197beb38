extension Array where Element == UInt8 {
    /// Appends an integer's little-endian bytes.
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { self.append(contentsOf: $0) }
    }

    /// `withUnsafeBytes` for a body that throws ``LogError``, keeping the error type (the
    /// standard one is `rethrows`, which widens it to `any Error`).
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws(LogError) -> R) throws(LogError) -> R {
        try self.withUnsafeBytes { bytes in Result { () throws(LogError) in try body(bytes) } }.get()
    }
}
