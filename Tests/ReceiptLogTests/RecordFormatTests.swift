import Testing

@testable import ReceiptLog

struct RecordFormatTests {
    /// Split or not, the checksum is zlib's crc32 of the whole buffer.
    @Test(arguments: [0, 1, 2 << 20 - 1, 2 << 20, 2 << 20 + 1, 5_000_003])
    func crc32OnTwoThreadsIsTheCRC32OfTheWhole(count: Int) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &+ UInt64(count)
        let bytes = (0..<count).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        bytes.withUnsafeBytes { raw in
            #expect(RecordFormat.crc32OnTwoThreads(raw) == RecordFormat.crc32(raw))
        }
    }
}
