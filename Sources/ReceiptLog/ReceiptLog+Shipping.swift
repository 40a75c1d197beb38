import Glibc

extension ReceiptLog {
    /// Opens a cursor that reads the durable records from `position` on, now and as more
    /// become durable: what a primary's shipper follows its log with.
    ///
    /// - Parameter position: The start of a record (the end of the one before it, as
    ///   ``append(type:payload:)`` returned it), at most ``durablePosition``; ``LogPosition/zero``
    ///   for the log's start.
    /// - Returns: A cursor at `position`.
    /// - Throws: ``LogError`` `.compacted` when compaction deleted the segment holding
    ///   `position` (ship a snapshot instead), `.notRecordBoundary` when `position` falls inside
    ///   a record, `.invalidArgument` when it is beyond the durable position, `.closed` after
    ///   ``close()`` or a fatal error, `.io` or `.corruption` when a segment cannot be read.
    public func cursor(from position: LogPosition) throws(LogError) -> LogCursor {
        try LogCursor(writer: self.writer, from: position)
    }

    /// Appends a record that must start at `position`: a standby writes the primary's records
    /// as they were written, the same bytes at the same positions.
    ///
    /// Otherwise as ``append(type:payload:)``. The check and the append are one step under the
    /// writer's lock, so no other append can slip between them.
    ///
    /// - Parameters:
    ///   - type: The record's type tag, as the primary wrote it.
    ///   - payload: The record's payload, as the primary wrote it.
    ///   - position: Where the record starts in the primary's log (its predecessor's end).
    /// - Returns: The record's end position, as in the primary's log.
    /// - Throws: ``LogError`` `.positionMismatch` when `position` is not ``appendedPosition``
    ///   (nothing is appended); otherwise as ``append(type:payload:)``.
    public func append(
        type: UInt8,
        payload: UnsafeRawBufferPointer,
        at position: LogPosition
    ) throws(LogError) -> LogPosition {
        LogPosition(offset: try self.writer.append(type: type, payload: payload, at: position.offset))
    }

    /// Keeps compaction from deleting the segment holding `position` and every later one until
    /// the returned pin is released: a shipper pins what its standby still needs.
    ///
    /// - Parameter position: A position the log still holds, at most ``appendedPosition``.
    /// - Returns: The pin; ``LogPin/release()`` lets the segments go.
    /// - Throws: ``LogError`` `.compacted` when the segment holding `position` is already
    ///   deleted, `.invalidArgument` when `position` is beyond the log's end, `.closed` after
    ///   ``close()`` or a fatal error.
    public func pin(_ position: LogPosition) throws(LogError) -> LogPin {
        let key = try self.writer.state.withLock { state throws(LogError) -> Int in
            if let refusal = LogWriter.refusal(state) { throw refusal }
            return try Self.addPin(at: position.offset, to: &state)
        }
        return LogPin(writer: self.writer, key: key)
    }

    /// Appends records exactly as the primary stored them (``LogCursor/readRaw(maxBytes:_:)``
    /// hands them out), the first starting at `position`: a standby's append of what a
    /// primary shipped.
    ///
    /// Every record is checked (whole, crc32 right) before any is appended, so a damaged or
    /// cut transfer appends nothing. Then each goes through ``append(type:payload:at:)`` at its
    /// own position. The check of `position` is the first append's: when another thread
    /// appends between two of these records (a standby has one appender, its follower, so this
    /// does not happen there), the later ones are refused with `.positionMismatch`.
    ///
    /// - Parameters:
    ///   - records: One or more whole records, header and payload each, back to back.
    ///   - position: Where the first record starts in the primary's log: ``appendedPosition``.
    /// - Returns: Where the last record ends, as in the primary's log.
    /// - Throws: ``LogError`` `.invalidArgument` when `records` is empty; `.corruption` when a
    ///   record does not check out or `records` ends inside one (the error's message names the
    ///   offset in `records` and the log position; nothing is appended);
    ///   `.positionMismatch` when `position` is not ``appendedPosition`` (nothing is appended);
    ///   otherwise as ``append(type:payload:)``, with the records before the failing one
    ///   appended.
    public func appendShipped(
        _ records: UnsafeRawBufferPointer,
        at position: LogPosition
    ) throws(LogError) -> LogPosition {
        guard !records.isEmpty else {
            throw LogError(code: .invalidArgument, message: "no records to append at \(position.offset)")
        }
        let checked = SegmentScan.walk(records, from: 0) { _, _ in true }
        let place = "offset \(checked.end) (log position \(position.offset + UInt64(checked.end)))"
        if let damage = checked.damage {
            throw LogError(code: .corruption, message: "the shipped record at \(place) does not check out (\(damage))")
        }
        guard checked.end == records.count else {
            throw LogError(code: .corruption, message: "the shipped bytes end inside the record at \(place)")
        }
        var end = position
        var offset = 0
        while offset < records.count {
            let header = RecordFormat.RecordHeader(records, at: offset)
            end = try self.append(type: header.type, payload: header.payload(in: records, at: offset), at: end)
            offset += header.recordLength
        }
        return end
    }

    /// Opens the newest snapshot file, for a shipper to send to a standby that needs records
    /// the log no longer holds (its cursor threw `.compacted`).
    ///
    /// The snapshot is chosen and pinned in one step under the writer's lock, so compaction
    /// keeps the segments from its position on while it ships; the standby continues from
    /// there. Its file is opened before anything is sent: a later compaction may unlink it, but
    /// the open descriptor keeps every byte readable. If a compaction unlinked it between the
    /// choice and the open, the then newest one is taken instead.
    ///
    /// - Returns: The open snapshot, with its pin; nil when the log has no snapshot.
    /// - Throws: ``LogError`` `.closed` after ``close()`` or a fatal error; `.io` when the file
    ///   cannot be opened (it is missing although the log still lists it as its newest).
    public func openNewestSnapshot() throws(LogError) -> ShippedSnapshot? {
        try self.openNewestSnapshot(beforeOpening: {})
    }

    /// ``openNewestSnapshot()``, with `beforeOpening` called between choosing the snapshot and
    /// opening its file: where tests run the compaction that unlinks it.
    func openNewestSnapshot(beforeOpening: () throws(LogError) -> Void) throws(LogError) -> ShippedSnapshot? {
        while true {
            let chosen = try self.writer.state.withLock { state throws(LogError) -> (position: UInt64, key: Int)? in
                if let refusal = LogWriter.refusal(state) { throw refusal }
                guard let newest = state.snapshots.last else { return nil }
                return (newest, try Self.addPin(at: newest, to: &state))
            }
            guard let chosen else { return nil }
            let pin = LogPin(writer: self.writer, key: chosen.key)
            try beforeOpening()
            let path = self.writer.directory + "/" + LogFileName.snapshot(position: chosen.position)
            do {
                return try ShippedSnapshot(path: path, position: LogPosition(offset: chosen.position), pin: pin)
            } catch  where (error.cause as? SystemCallError)?.errno == ENOENT {
                // Unlinked by a compaction since it was chosen: that compaction wrote a newer one.
                pin.release()
                guard self.writer.state.withLock({ $0.snapshots.last != chosen.position }) else { throw error }
            }
        }
    }

    /// Adds a pin at `position` to the writer's state, under its lock.
    ///
    /// - Returns: The pin's key.
    /// - Throws: As ``pin(_:)``.
    private static func addPin(at position: UInt64, to state: inout WriterState) throws(LogError) -> Int {
        guard let first = state.segments.first, first <= position else {
            throw LogError(
                code: .compacted,
                message: "position \(position) is before the oldest segment kept, at \(state.segments.first ?? 0)"
            )
        }
        guard position <= state.appended else {
            throw LogError(
                code: .invalidArgument,
                message: "position \(position) is beyond the log's end \(state.appended)"
            )
        }
        defer { state.nextPin += 1 }
        state.pins[state.nextPin] = position
        return state.nextPin
    }
}
