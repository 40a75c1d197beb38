import Testing

@testable import ReceiptLog

struct SegmentScanTests {
    /// A segment holding `count` records of `size` bytes each.
    static func segment(records count: Int, size: Int) -> [UInt8] {
        var bytes = RecordFormat.segmentHeader(start: 0)
        for index in 0..<count {
            let payload = [UInt8](repeating: UInt8(index), count: size)
            bytes.appendLittleEndian(UInt32(size))
            bytes.append(3)
            bytes.appendLittleEndian(payload.withUnsafeBytes { RecordFormat.recordChecksum(type: 3, payload: $0) })
            bytes += payload
        }
        return bytes
    }

    @Test func cleanSegmentScansToTheEnd() {
        let bytes = Self.segment(records: 10, size: 20)
        let scan = bytes.withUnsafeBytes { SegmentScan($0, start: 0) }
        #expect(scan.records == 10)
        #expect(scan.validEnd == bytes.count)
        #expect(scan.damage == nil)
    }

    @Test func damagedLengthFieldIsFoundByTheByteScan() {
        var bytes = Self.segment(records: 10, size: 20)
        bytes[RecordFormat.segmentHeaderSize + 3 * 29] = 0xEE
        let scan = bytes.withUnsafeBytes { SegmentScan($0, start: 0) }
        #expect(scan.records == 3)
        #expect(scan.damage?.followedByValidRecord == true)
    }

    @Test func exhaustedSearchBudgetErsOnTheSideOfCorruption() {
        let zeros = [UInt8](repeating: 0, count: 4096)
        zeros.withUnsafeBytes { bytes in
            #expect(!SegmentScan.hasValidFrame(bytes, after: 0))
            #expect(SegmentScan.hasValidFrame(bytes, after: 0, budget: 100))
        }
    }

    @Test func snapshotOffsetsThatAreNotRecordBoundariesAreRejected() {
        let bytes = Self.segment(records: 4, size: 11)
        bytes.withUnsafeBytes { raw in
            #expect(SegmentScan.recordsBefore(raw, target: RecordFormat.segmentHeaderSize) == 0)
            #expect(SegmentScan.recordsBefore(raw, target: RecordFormat.segmentHeaderSize + 40) == 2)
            #expect(SegmentScan.recordsBefore(raw, target: RecordFormat.segmentHeaderSize + 41) == nil)
            #expect(SegmentScan.recordsBefore(raw, target: raw.count + 20) == nil)
        }
    }

    @Test func fileNamesRoundTrip() {
        #expect(LogFileName.parse(LogFileName.segment(start: 1234)) == .segment(start: 1234))
        #expect(LogFileName.parse(LogFileName.snapshot(position: 99)) == .snapshot(position: 99))
        #expect(LogFileName.parse("snapshot-00000000000000000099.snap.tmp") == .snapshotTemporary)
        #expect(LogFileName.parse("segment-12.log") == nil)
        #expect(LogFileName.parse("snapshot-00000000000000000099.snap.corrupt") == nil)
        #expect(LogFileName.parse(LogFileName.lock) == nil)
    }
}
