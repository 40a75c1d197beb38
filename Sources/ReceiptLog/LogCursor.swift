import Glibc

/// Reads the log's durable records in order from a record's start, and later again for what
/// became durable since: how a primary's shipper follows its log while the worker appends.
///
/// Opened with ``ReceiptLog/cursor(from:)``. Each ``read(maxBytes:_:)`` hands out the records
/// between ``position`` and the log's durable position, across segment files, each checked
/// against its crc32, and returns 0 once the cursor has caught up; read again after the
/// durable position moved (the log's `onDurable` says when). ``readRaw(maxBytes:_:)`` hands out
/// the same records as the bytes they are stored as, for a shipper to send unchanged.
///
/// Safe beside the writer thread and compaction, by what it reads and how:
/// - Only bytes before the durable position. The writer wrote them (and under
///   ``FsyncPolicy/always`` synced them) before it published that position, and never writes
///   them again: appends go past them, and only truncation, which needs the log closed,
///   shortens a file.
/// - With `pread`, into a buffer of its own, through its own descriptor of one segment file at
///   a time. Nothing is mapped, so no change to a file can fault the process (a mapping read
///   past the end of a file that shrank raises SIGBUS). A segment that compaction unlinks while
///   the cursor reads it stays readable through the descriptor.
/// - The segment list and the durable position are read together under the writer's lock, and
///   the writer lists a new segment before it writes to it, so the cursor never looks for
///   durable bytes in the wrong file.
///
/// Compaction may delete the segments ahead of a cursor (a read then throws `.compacted`):
/// hold a ``LogPin`` at its position to keep them. Not `Sendable`: one thread reads a cursor.
public final class LogCursor {
    /// One durable record.
    public struct Record {
        /// The record's type tag.
        public var type: UInt8
        /// The record's payload; valid only during the call that receives it.
        public var payload: UnsafeRawBufferPointer
        /// Where the record starts: the end of the record before it.
        public var start: LogPosition
        /// Where the record ends: the next record's start, and the position
        /// ``ReceiptLog/append(type:payload:)`` returned for it.
        public var end: LogPosition
    }

    /// The segment file being read.
    private struct OpenSegment {
        var start: UInt64
        var fd: Int32
        var path: String
    }

    /// How many bytes a read asks the file for at once, unless one record is longer.
    static let chunkSize = 256 << 10

    private let writer: LogWriter
    private var segment: OpenSegment?
    private var buffer: UnsafeMutableRawBufferPointer
    /// Where the next record starts: everything before it has been read.
    public private(set) var position: LogPosition

    /// Opens a cursor at `position`, checking that a record starts there by walking the
    /// records from the start of its segment.
    init(writer: LogWriter, from position: LogPosition) throws(LogError) {
        self.writer = writer
        self.buffer = .allocate(byteCount: Self.chunkSize, alignment: 16)
        self.position = position
        let durable = writer.durablePosition
        guard position.offset <= durable else {
            throw LogError(
                code: .invalidArgument,
                message: "position \(position.offset) is beyond the log's durable position \(durable)"
            )
        }
        let (segmentStart, _) = try self.readable()
        guard position.offset > segmentStart else { return }
        self.position = LogPosition(offset: segmentStart)
        let walk = try self.read(upTo: position.offset, inSegmentStartingAt: segmentStart, maxBytes: .max) { _ in true }
        guard !walk.crossesLimit else {
            throw LogError(
                code: .notRecordBoundary,
                message: "position \(position.offset) falls inside a record (one starts at \(self.position.offset))"
            )
        }
    }

    deinit {
        self.closeSegment()
        self.buffer.deallocate()
    }

    /// Hands the records that are durable from ``position`` on to `body`, in log order, and
    /// moves ``position`` past each one `body` returns from.
    ///
    /// - Parameters:
    ///   - maxBytes: Stop once this many bytes of records (headers included) have been read;
    ///     the first record is read whatever its size.
    ///   - body: Receives each record; its payload is valid only during the call. When it
    ///     throws, reading stops and ``position`` stays at that record's start, so the next read
    ///     starts with it again.
    /// - Returns: The number of records read: 0 when the cursor is at the durable position.
    /// - Throws: What `body` throws, or ``LogError``: `.compacted` once compaction deleted the
    ///   segment at ``position`` (send a snapshot instead), `.closed` after ``ReceiptLog/close()``
    ///   or a fatal error, `.corruption` or `.io` when a durable record cannot be read back.
    public func read(maxBytes: Int = 1 << 20, _ body: (Record) throws -> Void) throws -> Int {
        var failure: (any Error)?
        let records = try self.readDurable(maxBytes: maxBytes) { record in
            do {
                try body(record)
                return true
            } catch {
                failure = error
                return false
            }
        }
        if let failure { throw failure }
        return records
    }

    /// Hands the durable records from ``position`` on to `body` as their raw bytes, each run
    /// of records exactly as it lies in the segment (header and payload of each, back to back),
    /// and moves ``position`` past each run `body` returns from: what a shipper sends, so that
    /// a standby's ``ReceiptLog/appendShipped(_:at:)`` writes the same bytes without the
    /// primary decoding or encoding a header.
    ///
    /// Every record handed out has passed its crc32 check, as with ``read(maxBytes:_:)``. A run
    /// comes from one read of one segment file, so a call may hand out several runs (one per
    /// segment crossed, or per buffer filled); together they never exceed `maxBytes`, except
    /// that the first record is handed out whatever its size.
    ///
    /// - Parameters:
    ///   - maxBytes: The most bytes of records to hand out in this call.
    ///   - body: Receives each run (valid only during the call), the position where its first
    ///     record starts and the one where its last record ends. When it throws, reading stops
    ///     and ``position`` stays at the run's start, so the next read starts with it again.
    /// - Returns: The number of records handed out: 0 when the cursor is at the durable position.
    /// - Throws: What `body` throws, or ``LogError`` as ``read(maxBytes:_:)``.
    public func readRaw(
        maxBytes: Int = 1 << 20,
        _ body: (_ records: UnsafeRawBufferPointer, _ start: LogPosition, _ end: LogPosition) throws -> Void
    ) throws -> Int {
        let first = self.position.offset
        var failure: (any Error)?
        let records = try self.readDurable(
            maxBytes: maxBytes,
            records: { record in record.start.offset == first || record.end.offset - first <= UInt64(maxBytes) },
            runs: { bytes, start, end in
                do {
                    try body(bytes, start, end)
                    return true
                } catch {
                    failure = error
                    return false
                }
            }
        )
        if let failure { throw failure }
        return records
    }

    /// Reads the durable records from ``position`` on, across segments, until `maxBytes` bytes
    /// were read, the cursor caught up, or a callback declined.
    ///
    /// - Parameters:
    ///   - maxBytes: As for ``read(maxBytes:_:)``.
    ///   - records: Receives each record; false stops before it.
    ///   - runs: Receives the records of each chunk read, after `body` took them; false stops
    ///     and moves ``position`` back to the run's start.
    /// - Returns: The number of records read.
    private func readDurable(
        maxBytes: Int,
        records body: (Record) -> Bool,
        runs: (UnsafeRawBufferPointer, LogPosition, LogPosition) -> Bool = { _, _, _ in true }
    ) throws(LogError) -> Int {
        var records = 0
        var bytes = 0
        while bytes < maxBytes {
            let (segmentStart, limit) = try self.readable()
            guard self.position.offset < limit else { break }
            let batch = try self.read(
                upTo: limit,
                inSegmentStartingAt: segmentStart,
                maxBytes: maxBytes - bytes,
                records: body,
                runs: runs
            )
            guard !batch.crossesLimit else {
                throw LogError(
                    code: .corruption,
                    message: "a record at \(self.position.offset) runs past the durable position or its segment's end",
                    file: self.segment?.path
                )
            }
            records += batch.records
            bytes += batch.bytes
            if batch.declined { break }
        }
        return records
    }

    /// The start of the segment holding ``position``, and how far the cursor may read in it:
    /// the durable position or the next segment's start, whichever comes first.
    private func readable() throws(LogError) -> (segmentStart: UInt64, limit: UInt64) {
        let position = self.position.offset
        return try self.writer.state.withLock { state throws(LogError) in
            if let refusal = LogWriter.refusal(state) { throw refusal }
            guard let index = state.segments.lastIndex(where: { $0 <= position }) else {
                throw LogError(
                    code: .compacted,
                    message: "position \(position) is before the oldest segment kept, at \(state.segments.first ?? 0)"
                )
            }
            let next = index + 1 < state.segments.count ? state.segments[index + 1] : UInt64.max
            return (state.segments[index], min(self.writer.durablePosition, next))
        }
    }

    /// Reads the records from ``position`` up to `limit`, a position inside or at the end of
    /// the segment starting at `segmentStart`, handing each to `body` and the records of each
    /// chunk read to `runs`, until one of them declines or `maxBytes` bytes have been read.
    ///
    /// - Returns: The records and bytes read, whether it stopped at a record that runs past
    ///   `limit` (so `limit` is not a record boundary), and whether a callback declined.
    private func read(
        upTo limit: UInt64,
        inSegmentStartingAt segmentStart: UInt64,
        maxBytes: Int,
        records body: (Record) -> Bool,
        runs: (UnsafeRawBufferPointer, LogPosition, LogPosition) -> Bool = { _, _, _ in true }
    ) throws(LogError) -> (records: Int, bytes: Int, crossesLimit: Bool, declined: Bool) {
        let segment = try self.open(segmentStartingAt: segmentStart)
        var records = 0
        var bytes = 0
        var declined = false
        while self.position.offset < limit && bytes < maxBytes && !declined {
            let chunkStart = self.position.offset
            let wanted = Int(min(limit - chunkStart, UInt64(self.buffer.count)))
            let fileOffset = chunkStart - segmentStart + UInt64(RecordFormat.segmentHeaderSize)
            let target = UnsafeMutableRawBufferPointer(rebasing: self.buffer[..<wanted])
            guard try FileIO.preadAll(segment.fd, into: target, at: fileOffset, path: segment.path) == wanted else {
                throw LogError(
                    code: .corruption,
                    message: "the segment ends before the durable position",
                    file: segment.path,
                    offset: fileOffset
                )
            }
            let chunk = UnsafeRawBufferPointer(target)
            let recordsBefore = records
            let stop = SegmentScan.walk(chunk, from: 0) { header, offset in
                let start = chunkStart + UInt64(offset)
                let record = Record(
                    type: header.type,
                    payload: header.payload(in: chunk, at: offset),
                    start: LogPosition(offset: start),
                    end: LogPosition(offset: start + UInt64(header.recordLength))
                )
                guard body(record) else {
                    declined = true
                    return false
                }
                self.position = record.end
                records += 1
                bytes += header.recordLength
                return bytes < maxBytes
            }
            let run = Int(self.position.offset - chunkStart)
            if run > 0
                && !runs(
                    UnsafeRawBufferPointer(rebasing: chunk[..<run]),
                    LogPosition(offset: chunkStart),
                    self.position
                )
            {
                self.position = LogPosition(offset: chunkStart)
                return (recordsBefore, bytes - run, false, true)
            }
            if let damage = stop.damage {
                throw LogError(
                    code: .corruption,
                    message: "a durable record no longer checks out (\(damage))",
                    file: segment.path,
                    offset: fileOffset + UInt64(stop.end)
                )
            }
            guard stop.end == 0 else { continue }
            // Not even the first record fits in what was read: it runs past `limit`, or it is
            // longer than the buffer (which is then at least a header long).
            if wanted == limit - chunkStart { return (records, bytes, true, false) }
            let needed = RecordFormat.RecordHeader.payloadLength(chunk, at: 0) + RecordFormat.recordHeaderSize
            self.buffer.deallocate()
            self.buffer = .allocate(byteCount: needed, alignment: 16)
        }
        return (records, bytes, false, declined)
    }

    /// The descriptor of the segment starting at `start`, opened when the cursor enters it.
    private func open(segmentStartingAt start: UInt64) throws(LogError) -> OpenSegment {
        if let segment = self.segment, segment.start == start { return segment }
        self.closeSegment()
        let path = self.writer.directory + "/" + LogFileName.segment(start: start)
        do {
            let segment = OpenSegment(start: start, fd: try FileIO.open(path, O_RDONLY), path: path)
            self.segment = segment
            return segment
        } catch  where (error.cause as? SystemCallError)?.errno == ENOENT {
            // Listed under the lock, unlinked by a compaction since.
            throw LogError(code: .compacted, message: "segment \(start) was deleted by compaction", file: path)
        }
    }

    private func closeSegment() {
        if let segment = self.segment { FileIO.close(segment.fd) }
        self.segment = nil
    }
}
