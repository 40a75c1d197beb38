import CZlib

/// The on-disk layout of segments and records, and the crc32 they use.
///
/// A segment file starts with a 24-byte header, then holds records back to back:
///
///     segment header: magic "RCPTSEG\0" | version u32 | start position u64 | crc32 u32 (of the 20 bytes before)
///     record:         length u32 | type u8 | crc32 u32 (of type and payload) | payload (length bytes)
///
/// All integers are little-endian. crc32 is zlib's (the IEEE polynomial), so other tools can
/// check records.
package enum RecordFormat {
    static let segmentMagic: [UInt8] = Array("RCPTSEG\0".utf8)
    static let segmentVersion: UInt32 = 1
    package static let segmentHeaderSize = 24
    static let recordHeaderSize = 9
    /// The largest payload a record may carry; anything longer is treated as a damaged length.
    static let maxPayload = 256 << 20

    /// zlib's crc32 of `bytes`, continuing from `crc`.
    @inline(__always)
    static func crc32(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return crc }
        return UInt32(truncatingIfNeeded: crc32_z(UInt(crc), base.assumingMemoryBound(to: UInt8.self), bytes.count))
    }

    /// The checksum stored in a record: crc32 over the type byte, then the payload.
    @inline(__always)
    package static func recordChecksum(type: UInt8, payload: UnsafeRawBufferPointer) -> UInt32 {
        var type = type
        let crc = withUnsafeBytes(of: &type) { crc32($0) }
        return crc32(payload, continuing: crc)
    }

    /// The 24-byte header of a segment starting at `start`.
    package static func segmentHeader(start: UInt64) -> [UInt8] {
        var header = segmentMagic
        header.appendLittleEndian(segmentVersion)
        header.appendLittleEndian(start)
        let crc = header.withUnsafeBytes { crc32($0) }
        header.appendLittleEndian(crc)
        return header
    }

    /// Whether `bytes` begins with a valid header for a segment starting at `start`.
    static func isValidSegmentHeader(_ bytes: UnsafeRawBufferPointer, start: UInt64) -> Bool {
        guard bytes.count >= segmentHeaderSize else { return false }
        return bytes.prefix(segmentHeaderSize).elementsEqual(segmentHeader(start: start))
    }
}
