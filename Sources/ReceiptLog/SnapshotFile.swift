/// The on-disk layout of a snapshot file, and checking one.
///
///     header:  magic "RCPTSNP\0" | version u32 | position u64 | payload length u64 |
///              payload crc32 u32 | header crc32 u32 (of the 32 bytes before)
///     payload: opaque bytes from the service
///
/// Little-endian. The header repeats the position so a renamed file cannot pass for another.
enum SnapshotFile {
    static let magic: [UInt8] = Array("RCPTSNP\0".utf8)
    static let version: UInt32 = 1
    static let headerSize = 36

    /// The header for a payload covering the log up to `position`.
    static func header(position: UInt64, payload: UnsafeRawBufferPointer) -> [UInt8] {
        var header = magic
        header.appendLittleEndian(version)
        header.appendLittleEndian(position)
        header.appendLittleEndian(UInt64(payload.count))
        header.appendLittleEndian(RecordFormat.crc32(payload))
        let crc = header.withUnsafeBytes { RecordFormat.crc32($0) }
        header.appendLittleEndian(crc)
        return header
    }

    /// The payload of a valid snapshot file's bytes, or nil when anything fails to check.
    ///
    /// - Parameters:
    ///   - bytes: The whole file.
    ///   - position: The position its name gives.
    ///   - checkingPayload: Whether to check the payload's crc32 too (one pass over the whole
    ///     file); false for a file already checked.
    static func payload(
        in bytes: UnsafeRawBufferPointer,
        position: UInt64,
        checkingPayload: Bool = true
    ) -> UnsafeRawBufferPointer? {
        guard bytes.count >= headerSize, bytes.prefix(magic.count).elementsEqual(magic) else { return nil }
        let headerCRC = RecordFormat.crc32(UnsafeRawBufferPointer(rebasing: bytes[0..<32]))
        guard bytes.littleEndian(at: 32, as: UInt32.self) == headerCRC,
            bytes.littleEndian(at: 8, as: UInt32.self) == version,
            bytes.littleEndian(at: 12, as: UInt64.self) == position,
            bytes.littleEndian(at: 20, as: UInt64.self) == UInt64(bytes.count - headerSize)
        else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[headerSize...])
        guard !checkingPayload || RecordFormat.crc32OnTwoThreads(payload) == bytes.littleEndian(at: 28, as: UInt32.self)
        else {
            return nil
        }
        return payload
    }
}
