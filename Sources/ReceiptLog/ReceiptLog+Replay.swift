extension ReceiptLog {
    /// Calls `body` for every record after the recovery snapshot's position, in log order.
    ///
    /// Records come straight out of a read-only mapping of each segment: `payload` points into
    /// it and is valid only during the call (copy what must outlive it). Every record's crc32
    /// is checked again. Call it once, before appending; records appended after open are not
    /// visited.
    ///
    /// - Parameter body: Receives the record's type, payload and end position.
    /// - Throws: What `body` throws, or ``LogError`` if a segment can no longer be read or no
    ///   longer matches what recovery checked.
    public func replay(
        _ body: (_ type: UInt8, _ payload: UnsafeRawBufferPointer, _ end: LogPosition) throws -> Void
    ) throws {
        let headerSize = RecordFormat.segmentHeaderSize
        for segment in self.replaySegments where segment.start + segment.length > self.replayStart {
            let file = try MappedFile(path: segment.path)
            let bytes = file.bytes
            let end = headerSize + Int(segment.length)
            guard bytes.count >= end else {
                throw LogError(
                    code: .corruption,
                    message: "segment shrank after recovery",
                    file: segment.path,
                    offset: UInt64(bytes.count)
                )
            }
            var offset = headerSize + Int(self.replayStart > segment.start ? self.replayStart - segment.start : 0)
            while offset < end {
                guard case .valid(let length) = SegmentScan.frame(bytes, at: offset), offset + length <= end else {
                    throw LogError(
                        code: .corruption,
                        message: "record changed after recovery",
                        file: segment.path,
                        offset: UInt64(offset)
                    )
                }
                let payload = UnsafeRawBufferPointer(
                    rebasing: bytes[(offset + RecordFormat.recordHeaderSize)..<(offset + length)]
                )
                offset += length
                try body(
                    bytes[offset - length + 4],
                    payload,
                    LogPosition(offset: segment.start + UInt64(offset - headerSize))
                )
            }
        }
    }
}
