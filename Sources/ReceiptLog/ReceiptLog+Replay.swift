import Glibc

extension ReceiptLog {
    /// Calls `body` for every record after the recovery snapshot's position, in log order.
    ///
    /// Records come straight out of a read-only mapping of each segment: `payload` points into
    /// it and is valid only during the call (copy what must outlive it). Every record's crc32
    /// is checked again. Call it once, before appending; records appended after open are not
    /// visited (a ``LogCursor`` follows those, see ``cursor(from:)``).
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
            let records = UnsafeRawBufferPointer(rebasing: bytes[..<end])
            let first = headerSize + Int(self.replayStart > segment.start ? self.replayStart - segment.start : 0)
            let stop = try SegmentScan.walk(records, from: first) { header, offset in
                try body(
                    header.type,
                    header.payload(in: records, at: offset),
                    LogPosition(offset: segment.start + UInt64(offset + header.recordLength - headerSize))
                )
                return true
            }
            guard stop.end == end, stop.damage == nil else {
                throw LogError(
                    code: .corruption,
                    message: "record changed after recovery",
                    file: segment.path,
                    offset: UInt64(stop.end)
                )
            }
        }
    }
}

extension ReceiptLog {
    /// Replays like ``replay(_:)``, on two threads: `prepare` runs on a helper thread for each
    /// record (decoding it, say) while `apply` runs on the calling thread with what `prepare`
    /// returned for earlier records, in log order.
    ///
    /// With a second core free, replay then takes about as long as the slower of the two
    /// halves instead of their sum.
    ///
    /// - Parameters:
    ///   - depth: How many prepared records may wait for `apply`.
    ///   - prepare: Receives the record's type, payload and end position, as in ``replay(_:)``
    ///     (the payload is valid only during the call); runs on the `log-replay` helper thread.
    ///   - apply: Receives each prepared record, in log order, on the calling thread.
    /// - Throws: ``LogError`` with code `io` before any record is read if the helper thread
    ///   cannot be started; the first error of `prepare` (after applying every record before
    ///   it), of `apply` (the helper stops), or ``LogError`` as ``replay(_:)`` does.
    public func replay<Prepared: Sendable>(
        depth: Int = 16,
        preparing prepare:
            @escaping @Sendable (_ type: UInt8, _ payload: UnsafeRawBufferPointer, _ end: LogPosition)
            throws -> Prepared,
        applying apply: (Prepared) throws -> Void
    ) throws {
        try replay(depth: depth, threads: .standard, preparing: prepare, applying: apply)
    }

    /// Replays as ``replay(depth:preparing:applying:)`` does, starting the helper thread with
    /// `threads`.
    ///
    /// A helper that cannot be started is an error, not a replay on the calling thread alone:
    /// a process the system refuses one thread at start-up is refused the worker's next one
    /// too, and failing here names the cause where it happens.
    package func replay<Prepared: Sendable>(
        depth: Int = 16,
        threads: ThreadStarter,
        preparing prepare:
            @escaping @Sendable (_ type: UInt8, _ payload: UnsafeRawBufferPointer, _ end: LogPosition)
            throws -> Prepared,
        applying apply: (Prepared) throws -> Void
    ) throws {
        let queue = ReplayQueue<Prepared>(depth: depth)
        let started = threads.start("log-replay") {
            do {
                try self.replay { type, payload, end in
                    guard queue.push(try prepare(type, payload, end)) else { throw CancellationError() }
                }
                queue.finish(nil)
            } catch {
                queue.finish(error)
            }
        }
        let thread: pthread_t
        switch started {
        case .success(let helper): thread = helper
        case .failure(let failure):
            throw LogError(code: .io, message: "cannot start the log-replay thread", cause: failure)
        }
        defer { pthread_join(thread, nil) }
        do {
            while let prepared = try queue.pop() { try apply(prepared) }
        } catch {
            queue.cancel()
            throw error
        }
    }
}
