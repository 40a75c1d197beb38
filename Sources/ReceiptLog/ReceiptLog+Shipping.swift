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
            guard let first = state.segments.first, first <= position.offset else {
                throw LogError(
                    code: .compacted,
                    message:
                        "position \(position.offset) is before the oldest segment kept, at \(state.segments.first ?? 0)"
                )
            }
            guard position.offset <= state.appended else {
                throw LogError(
                    code: .invalidArgument,
                    message: "position \(position.offset) is beyond the log's end \(state.appended)"
                )
            }
            defer { state.nextPin += 1 }
            state.pins[state.nextPin] = position.offset
            return state.nextPin
        }
        return LogPin(writer: self.writer, key: key)
    }
}
