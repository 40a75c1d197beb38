import ReceiptLog

/// The log segment scanner, on segments built from the input.
///
/// The first input byte picks the shape: 0 the rest is a whole file; 1 a valid segment header
/// then the rest; 2 valid records cut from the rest (a length byte, a type byte, then that
/// many payload bytes each); 3 the same records, then one byte flipped, a cut, or zeroes to
/// the end, where the last four input bytes say.
enum SegmentTarget {
    static let start: UInt64 = 4096

    /// Scans the segment `input` describes.
    ///
    /// - Throws: `InvariantViolation` when the scan's account of the segment is wrong.
    static func run(_ input: [UInt8]) throws(InvariantViolation) {
        guard let shape = input.first else { return }
        let rest = Array(input.dropFirst())
        switch shape % 4 {
        case 0:
            try scan(rest)
        case 1:
            try scan(RecordFormat.segmentHeader(start: start) + rest)
        case 2:
            let (segment, ends) = built(from: rest)
            try scan(segment, expectingValidUpTo: segment.count, recordEnds: ends)
        default:
            let (records, how) = rest.count > 4 ? (Array(rest.dropLast(4)), Array(rest.suffix(4))) : ([], [])
            let (original, ends) = built(from: records)
            let segment = damaged(original, by: how)
            // The scan keeps every record before the first changed byte, and stops at the
            // changed record unless its bytes still check out: the record length is not under
            // the checksum, and a payload of four 0xFF bytes then zeros keeps its crc32 (0xFFFFFFFF)
            // whatever the number of zeros, so a changed length can still give a valid record.
            let common = min(original.count, segment.count)
            let firstChange = (0..<common).first { original[$0] != segment[$0] } ?? common
            let validUpTo =
                firstChange < RecordFormat.segmentHeaderSize
                ? 0 : ([RecordFormat.segmentHeaderSize] + ends).last { $0 <= firstChange }!
            try scan(
                segment,
                expectingValidUpTo: segment == original ? segment.count : validUpTo,
                recordEnds: ends,
                orBeyond: segment != original
            )
        }
    }

    /// A valid segment of the records cut from `bytes`, and the file offset where each ends.
    static func built(from bytes: [UInt8]) -> (segment: [UInt8], recordEnds: [Int]) {
        var segment = RecordFormat.segmentHeader(start: start)
        var ends: [Int] = []
        var offset = 0
        while offset + 2 <= bytes.count {
            let type = bytes[offset + 1]
            let payload = Array(bytes[(offset + 2)..<min(bytes.count, offset + 2 + Int(bytes[offset]))])
            offset += 2 + payload.count
            let checksum = payload.withUnsafeBytes { RecordFormat.recordChecksum(type: type, payload: $0) }
            withUnsafeBytes(of: UInt32(payload.count).littleEndian) { segment += $0 }
            segment.append(type)
            withUnsafeBytes(of: checksum.littleEndian) { segment += $0 }
            segment += payload
            ends.append(segment.count)
        }
        return (segment, ends)
    }

    /// `segment` with a byte flipped, a cut, or zeroes to the end, at a position `how` (four
    /// bytes) picks; unchanged when `how` is short.
    static func damaged(_ segment: [UInt8], by how: [UInt8]) -> [UInt8] {
        guard how.count == 4 else { return segment }
        var segment = segment
        let position = (Int(how[1]) << 16 | Int(how[2]) << 8 | Int(how[3])) % segment.count
        switch how[0] % 3 {
        case 0: segment[position] ^= max(how[0], 1)
        case 1: segment.removeSubrange(position...)
        default: segment.replaceSubrange(position..., with: repeatElement(0, count: segment.count - position))
        }
        return segment
    }

    /// Scans `segment` and checks what every scan promises and, for a segment built here,
    /// where the valid records end (`orBeyond`: at least there, when changed bytes may still
    /// form records that check out).
    static func scan(
        _ segment: [UInt8],
        expectingValidUpTo expected: Int? = nil,
        recordEnds: [Int] = [],
        orBeyond: Bool = false
    ) throws(InvariantViolation) {
        let result = segment.withUnsafeBytes { SegmentScan($0, start: start) }
        try require(
            result.validEnd <= segment.count,
            "the valid end \(result.validEnd) is past the file's \(segment.count) bytes"
        )
        if let expected {
            try require(
                result.validEnd == expected || (orBeyond && result.validEnd > expected),
                "the records are valid up to \(expected), but the scan says \(result.validEnd)"
            )
            let records = recordEnds.firstIndex { $0 > expected } ?? recordEnds.count
            try require(
                result.validEnd != expected || result.validEnd == 0 || result.records == records,
                "\(records) records end by \(expected), but the scan counts \(result.records)"
            )
        }
        if result.validEnd == 0 {
            try require(
                result.records == 0 && result.damage?.offset == 0,
                "a segment with a bad header has \(result.records) valid records, damage at \(String(describing: result.damage?.offset))"
            )
        } else if let damage = result.damage {
            try require(
                damage.offset == result.validEnd,
                "damage at \(damage.offset), but the valid end is \(result.validEnd)"
            )
        } else {
            try require(
                result.validEnd == segment.count,
                "no damage, but the valid end \(result.validEnd) is short of \(segment.count)"
            )
        }
    }
}
