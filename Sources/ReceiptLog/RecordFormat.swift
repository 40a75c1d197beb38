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
    static let recordHeaderSize = RecordHeader.size
    /// The largest payload a record may carry; anything longer is treated as a damaged length.
    static let maxPayload = 256 << 20

    /// Where a record with a payload of `payloadCount` bytes starts, from the position where it
    /// ends (the one replay hands over).
    package static func recordStart(end: UInt64, payloadCount: Int) -> UInt64 {
        end - UInt64(recordHeaderSize + payloadCount)
    }

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

    /// A record's header as stored: the payload's length, the type, and the crc32 of type and
    /// payload.
    ///
    /// The only code that knows where these fields sit: the writer, the scan, replay and the
    /// cursor all read and write headers through it.
    struct RecordHeader {
        /// The header's size in bytes: length u32, type u8, crc32 u32.
        static let size = 9

        /// The payload's length in bytes (not checked against ``RecordFormat/maxPayload``).
        var payloadLength: Int
        /// The tag the service gave the record.
        var type: UInt8
        /// The stored crc32 of the type byte, then the payload.
        var checksum: UInt32

        /// The bytes the whole record takes, header and payload.
        var recordLength: Int {
            Self.size + self.payloadLength
        }

        /// A header for a record about to be written.
        init(payloadLength: Int, type: UInt8, checksum: UInt32) {
            self.payloadLength = payloadLength
            self.type = type
            self.checksum = checksum
        }

        /// Reads the header that starts at `offset`; the caller has checked that ``size`` bytes
        /// are there.
        @inline(__always)
        init(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
            self.payloadLength = Self.payloadLength(bytes, at: offset)
            self.type = bytes[offset + 4]
            self.checksum = bytes.littleEndian(at: offset + 5, as: UInt32.self)
        }

        /// Reads only the length field of the header at `offset` (at least 4 bytes there), for
        /// walks that follow lengths without checking records.
        @inline(__always)
        static func payloadLength(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
            Int(bytes.littleEndian(at: offset, as: UInt32.self))
        }

        /// The payload of the record whose header this is, which starts at `offset`; the caller
        /// has checked that the whole record is there.
        @inline(__always)
        func payload(in bytes: UnsafeRawBufferPointer, at offset: Int) -> UnsafeRawBufferPointer {
            UnsafeRawBufferPointer(rebasing: bytes[(offset + Self.size)..<(offset + self.recordLength)])
        }

        /// Appends the header's bytes.
        func append(to bytes: inout [UInt8]) {
            bytes.appendLittleEndian(UInt32(self.payloadLength))
            bytes.append(self.type)
            bytes.appendLittleEndian(self.checksum)
        }
    }
}
