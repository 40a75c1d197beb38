import ReceiptLog

/// The log segment scanner, on segments built from the input.
///
/// The first input byte picks the shape: 0 the rest is a whole file; 1 a valid segment header
/// then the rest; 2 valid records cut from the rest (a length byte, a type byte, then that
/// many payload bytes each); 3 the same records, then one byte flipped, cut or zeroed where the
/// last four input bytes say.
enum SegmentTarget {
    static let start: UInt64 = 4096

    static func run(_ input: [UInt8]) throws(InvariantViolation) {
        guard let shape = input.first else { return }
        let rest = Array(input.dropFirst())
        switch shape % 4 {
        case 0:
            try scan(rest)
        case 1:
            try scan(RecordFormat.segmentHeader(start: start) + rest)
        case 2:
            let (segment, records) = built(from: rest)
            let result = try scan(segment)
            try require(
                result.damage == nil && result.records == records && result.validEnd == segment.count,
                "a segment of \(records) valid records scanned as \(result.records) up to \(result.validEnd) of \(segment.count)"
            )
        default:
            let (records, damage) = (rest.count > 4 ? Array(rest.dropLast(4)) : [], rest.suffix(4))
            var (segment, _) = built(from: records)
            damaged(&segment, by: Array(damage))
            try scan(segment)
        }
    }

    /// A valid segment of the records cut from `bytes`, and how many there are.
    static func built(from bytes: [UInt8]) -> (segment: [UInt8], records: Int) {
        var segment = RecordFormat.segmentHeader(start: start)
        var offset = 0
        var records = 0
        while offset + 2 <= bytes.count {
            let type = bytes[offset + 1]
            let payload = Array(bytes[(offset + 2)..<min(bytes.count, offset + 2 + Int(bytes[offset]))])
            offset += 2 + payload.count
            let checksum = payload.withUnsafeBytes { RecordFormat.recordChecksum(type: type, payload: $0) }
            withUnsafeBytes(of: UInt32(payload.count).littleEndian) { segment += $0 }
            segment.append(type)
            withUnsafeBytes(of: checksum.littleEndian) { segment += $0 }
            segment += payload
            records += 1
        }
        return (segment, records)
    }

    /// Flips, cuts at or zeroes from a position chosen by `how` (up to four bytes).
    static func damaged(_ segment: inout [UInt8], by how: [UInt8]) {
        guard how.count == 4, !segment.isEmpty else { return }
        let position = (Int(how[1]) << 16 | Int(how[2]) << 8 | Int(how[3])) % segment.count
        switch how[0] % 3 {
        case 0: segment[position] ^= max(how[0], 1)
        case 1: segment.removeSubrange(position...)
        default: segment.replaceSubrange(position..., with: repeatElement(0, count: segment.count - position))
        }
    }

    /// Scans `segment` and checks what every scan promises.
    @discardableResult
    static func scan(_ segment: [UInt8]) throws(InvariantViolation) -> SegmentScan {
        let result = segment.withUnsafeBytes { SegmentScan($0, start: start) }
        try require(
            result.validEnd <= segment.count,
            "the valid end \(result.validEnd) is past the file's \(segment.count) bytes"
        )
        guard result.validEnd > 0 else {
            try require(
                result.records == 0 && result.damage?.offset == 0,
                "a segment with a bad header has no valid record"
            )
            return result
        }
        let counted = segment.withUnsafeBytes { SegmentScan.recordsBefore($0, target: result.validEnd) }
        try require(
            counted == result.records,
            "\(result.records) records before \(result.validEnd), but the record headers count \(String(describing: counted))"
        )
        if let damage = result.damage {
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
        return result
    }
}
