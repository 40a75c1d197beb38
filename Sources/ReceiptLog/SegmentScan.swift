/// The result of checking one segment file's bytes: how far it is valid and what follows.
package struct SegmentScan {
    /// Damage found in a segment, in file offsets.
    package struct Damage {
        package var offset: Int
        var kind: LogDamage.Kind
        /// Whether a record that checks out starts somewhere after `offset`: then the damage
        /// is not a torn tail but corruption in the middle of the log.
        var followedByValidRecord: Bool
        /// Frames (whole or partial) from `offset` to the end of the file.
        var droppedRecords: Int
    }

    /// Valid records from the header up to `validEnd`.
    package var records: Int
    /// The file offset just past the last valid record; 0 when the header itself is bad.
    package var validEnd: Int
    /// The first damage, if any.
    package var damage: Damage?

    /// Checks a segment's bytes: header, then every record's length and crc32.
    package init(_ bytes: UnsafeRawBufferPointer, start: UInt64) {
        guard RecordFormat.isValidSegmentHeader(bytes, start: start) else {
            let records =
                bytes.count > RecordFormat.segmentHeaderSize
                ? Self.countFrames(bytes, from: RecordFormat.segmentHeaderSize) : 0
            self.records = 0
            self.validEnd = 0
            self.damage = Damage(
                offset: 0,
                kind: Self.isZero(bytes, from: 0) ? .zeroFill : .badSegmentHeader,
                followedByValidRecord: Self.hasValidFrame(bytes, after: 0),
                droppedRecords: records
            )
            return
        }
        var offset = RecordFormat.segmentHeaderSize
        var records = 0
        var damage: Damage?
        while offset < bytes.count {
            switch Self.frame(bytes, at: offset) {
            case .valid(let header):
                offset += header.recordLength
                records += 1
            case .damaged(let kind):
                damage = Damage(
                    offset: offset,
                    kind: kind,
                    followedByValidRecord: Self.hasValidFrame(bytes, after: offset),
                    droppedRecords: Self.countFrames(bytes, from: offset)
                )
            }
            if damage != nil { break }
        }
        self.records = records
        self.validEnd = offset
        self.damage = damage
    }

    enum Frame {
        /// A whole record that checks out, with its header.
        case valid(RecordFormat.RecordHeader)
        case damaged(LogDamage.Kind)
    }

    /// Checks the record that starts at `offset`.
    @inline(__always)
    static func frame(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Frame {
        let remaining = bytes.count - offset
        let headerSize = RecordFormat.recordHeaderSize
        if isZero(bytes, from: offset, count: headerSize) {
            return .damaged(.zeroFill)
        }
        guard remaining >= headerSize else { return .damaged(.truncatedRecord) }
        let header = RecordFormat.RecordHeader(bytes, at: offset)
        guard header.payloadLength <= RecordFormat.maxPayload else { return .damaged(.invalidLength) }
        guard header.payloadLength <= remaining - headerSize else { return .damaged(.truncatedRecord) }
        let crc = RecordFormat.recordChecksum(type: header.type, payload: header.payload(in: bytes, at: offset))
        guard crc == header.checksum else { return .damaged(.checksumMismatch) }
        return .valid(header)
    }

    /// Walks the records from `offset` to the end of `bytes`, checking each one, and hands each
    /// to `body` with the offset where it starts: the one loop over checked records that replay
    /// and ``LogCursor`` share.
    ///
    /// - Parameters:
    ///   - bytes: Records back to back (a segment mapped up to its valid end, or a chunk read
    ///     from one); offsets are into it.
    ///   - offset: Where the first record starts.
    ///   - body: Receives each record's header and offset; returns false to stop after it.
    /// - Returns: Where the walk stopped: the end of `bytes`; the start of a record that does not
    ///   wholly fit in them (its rest is not read yet); where `body` asked to stop; or the start
    ///   of a damaged record, with its damage.
    /// - Throws: What `body` throws.
    @inline(__always)
    static func walk(
        _ bytes: UnsafeRawBufferPointer,
        from offset: Int,
        _ body: (RecordFormat.RecordHeader, Int) throws -> Bool
    ) rethrows -> (end: Int, damage: LogDamage.Kind?) {
        var offset = offset
        while bytes.count - offset >= RecordFormat.recordHeaderSize {
            let length = RecordFormat.RecordHeader.payloadLength(bytes, at: offset)
            if length <= RecordFormat.maxPayload && length > bytes.count - offset - RecordFormat.recordHeaderSize {
                break
            }
            switch frame(bytes, at: offset) {
            case .valid(let header):
                let goOn = try body(header, offset)
                offset += header.recordLength
                if !goOn { return (offset, nil) }
            case .damaged(let kind):
                return (offset, kind)
            }
        }
        return (offset, nil)
    }

    /// Whether a valid record starts at any offset after `offset`: tells a torn tail (nothing
    /// valid follows) from corruption in the middle (a flipped bit with records behind it).
    ///
    /// Looks first where the damaged record's own length points (the usual case of a flipped
    /// payload bit), then at every byte. Checksumming candidates in a long run of random garbage
    /// could take quadratic time, so the work is capped at `budget` checksummed bytes; past it the
    /// answer is "yes": refusing to start (the operator can cut) is safer than truncating what
    /// might be good records.
    static func hasValidFrame(_ bytes: UnsafeRawBufferPointer, after offset: Int, budget: Int = 256 << 20) -> Bool {
        var budget = budget
        let headerSize = RecordFormat.recordHeaderSize
        if bytes.count - offset >= headerSize {
            let chained = offset + headerSize + RecordFormat.RecordHeader.payloadLength(bytes, at: offset)
            if chained > offset + headerSize, chained + headerSize <= bytes.count,
                case .valid = frame(bytes, at: chained)
            {
                return true
            }
        }
        var candidate = offset + 1
        while candidate + headerSize <= bytes.count {
            let length = RecordFormat.RecordHeader.payloadLength(bytes, at: candidate)
            if length <= RecordFormat.maxPayload && length <= bytes.count - candidate - headerSize {
                budget -= length + 1
                if budget < 0 { return true }
                if case .valid = frame(bytes, at: candidate) { return true }
            }
            candidate += 1
        }
        return false
    }

    /// Counts frames from `offset` by following length fields as far as they are plausible;
    /// zero-filled space ends the count.
    static func countFrames(_ bytes: UnsafeRawBufferPointer, from offset: Int) -> Int {
        var offset = offset
        var count = 0
        while offset < bytes.count && !isZero(bytes, from: offset, count: RecordFormat.recordHeaderSize) {
            count += 1
            guard bytes.count - offset >= RecordFormat.recordHeaderSize else { break }
            let length = RecordFormat.RecordHeader.payloadLength(bytes, at: offset)
            guard length <= RecordFormat.maxPayload, length <= bytes.count - offset - RecordFormat.recordHeaderSize
            else { break }
            offset += RecordFormat.recordHeaderSize + length
        }
        return count
    }

    /// Walks record headers (no checksums) from the segment header to `target`; returns the
    /// number of records before it, or nil when `target` is not a record boundary.
    static func recordsBefore(_ bytes: UnsafeRawBufferPointer, target: Int) -> Int? {
        var offset = RecordFormat.segmentHeaderSize
        var count = 0
        while offset < target {
            guard bytes.count - offset >= RecordFormat.recordHeaderSize else { return nil }
            offset += RecordFormat.recordHeaderSize + RecordFormat.RecordHeader.payloadLength(bytes, at: offset)
            count += 1
        }
        return offset == target ? count : nil
    }

    /// Whether the bytes from `offset` (at most `count` of them, to the end by default) are all zero.
    static func isZero(_ bytes: UnsafeRawBufferPointer, from offset: Int, count: Int = .max) -> Bool {
        let end = count == .max ? bytes.count : min(bytes.count, offset + count)
        var index = offset
        while index < end {
            if bytes[index] != 0 { return false }
            index += 1
        }
        return true
    }
}
