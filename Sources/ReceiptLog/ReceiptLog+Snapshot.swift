import Glibc

extension ReceiptLog {
    /// Calls `body` with the snapshot recovery starts from, read in place from a mapping of its
    /// file: no copy, and no second check (opening checked it).
    ///
    /// Available until the first ``writeSnapshot(_:covering:)`` or ``close()``, which let go of
    /// the mapping (so that a later compaction can free the file's disk space); a call already
    /// running keeps it until it returns.
    ///
    /// - Parameter body: Receives the snapshot's position and payload; the payload is valid
    ///   only during the call.
    /// - Returns: What `body` returns, or nil when there is no snapshot (or no longer).
    /// - Throws: What `body` throws.
    public func withLatestSnapshot<Result, Failure: Error>(
        _ body: (_ position: LogPosition, _ payload: UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        guard let snapshot = self.recoverySnapshot.withLock({ $0 }) else { return nil }
        // Holds the mapping through `body`, whatever a concurrent release does meanwhile.
        return try withExtendedLifetime(snapshot) { () throws(Failure) in
            try body(snapshot.position, snapshot.payload)
        }
    }

    /// Writes the engine's live state as a snapshot covering the log up to `position`, then
    /// deletes what the previous snapshot made redundant. Call it on a background thread:
    /// appends keep flowing while it runs.
    ///
    /// The snapshot is written to a temporary file, synced, renamed into place, and the
    /// directory synced, so a crash leaves either the old set of files or the new one. The
    /// log is synced up to `position` first (even under `.none`), so a snapshot never covers
    /// records a power cut could take away. Exactly one older generation is kept: segments
    /// wholly covered by the *previous* snapshot, and snapshots older than it, are deleted, so
    /// losing the newest snapshot file still recovers everything from the older one plus the
    /// retained segments. Segments a ``LogPin`` holds are kept too, until a compaction after
    /// its release. The active segment is rolled at the next append so that it becomes
    /// deletable by a later compaction.
    ///
    /// - Parameters:
    ///   - payload: The service's encoding of its state; opaque to the log.
    ///   - position: The log position the state includes everything up to (a record end
    ///     returned by ``append(type:payload:)``, or the recovered end).
    /// - Returns: What was written and freed.
    /// - Throws: ``LogError`` `.invalidArgument` for a position beyond the log or before the
    ///   newest snapshot; `.closed` when the log stopped; `.io`/`.fsyncFailed` when writing
    ///   failed (a failed sync is fatal for the log, as for segments).
    public func writeSnapshot(_ payload: [UInt8], covering position: LogPosition) throws(LogError) -> CompactionReport {
        self.releaseRecoverySnapshot()
        return try self.compaction.withLock { _ throws(LogError) -> CompactionReport in
            let target = position.offset
            let (appended, newest) = self.writer.state.withLock { ($0.appended, $0.snapshots.last) }
            guard target <= appended, target >= newest ?? 0 else {
                throw LogError(
                    code: .invalidArgument,
                    message:
                        "snapshot position \(target) is outside the log (appended \(appended), newest snapshot \(newest ?? 0))"
                )
            }
            try self.writer.waitUntilSynced(target)
            let directory = self.writer.directory
            let name = LogFileName.snapshot(position: target)
            let bytes: UInt64
            do throws(LogError) {
                bytes = try Self.writeSnapshotFile(payload, position: target, directory: directory, name: name)
            } catch {
                if error.code == .fsyncFailed { self.writer.fail(error) }
                throw error
            }

            // Delete what the previous snapshot (the newest before this one) covers.
            let (previous, oldSnapshots, oldSegments) = self.writer.state.withLock { state in
                let previous = state.snapshots.last(where: { $0 < target })
                if state.snapshots.last != target { state.snapshots.append(target) }
                guard let previous else { return (UInt64?.none, [UInt64](), [UInt64]()) }
                let oldSnapshots = state.snapshots.filter { $0 < previous }
                state.snapshots.removeAll { $0 < previous }
                // A segment is wholly covered when the next one starts at or before `previous`;
                // the last (active) segment has no next and is never deleted. The lowest pin
                // keeps its segment and every later one.
                let kept = min(previous, state.pins.values.min() ?? previous)
                var oldSegments: [UInt64] = []
                while state.segments.count > 1 && state.segments[1] <= kept {
                    oldSegments.append(state.segments.removeFirst())
                }
                return (Optional(previous), oldSnapshots, oldSegments)
            }
            self.writer.state.withLock { $0.rollRequested = true }

            var bytesRemoved: UInt64 = 0
            for start in oldSegments {
                let path = directory + "/" + LogFileName.segment(start: start)
                bytesRemoved += (try? FileIO.size(ofFile: path)) ?? 0
                try FileIO.unlink(path)
            }
            for old in oldSnapshots {
                try FileIO.unlink(directory + "/" + LogFileName.snapshot(position: old))
            }
            if !oldSegments.isEmpty || !oldSnapshots.isEmpty {
                do throws(LogError) {
                    try FileIO.syncDirectory(directory)
                } catch {
                    self.writer.fail(error)
                    throw error
                }
            }
            self.writer.logger.debug(
                "wrote snapshot",
                metadata: [
                    "log.file": "\(directory)/\(name)", "log.position": "\(target)", "log.snapshot_bytes": "\(bytes)",
                    "log.previous_snapshot": "\(previous.map(String.init) ?? "none")",
                    "log.segments_removed": "\(oldSegments.count)", "log.bytes_removed": "\(bytesRemoved)",
                ]
            )
            return CompactionReport(
                position: position,
                snapshotBytes: bytes,
                segmentsRemoved: oldSegments.count,
                bytesRemoved: bytesRemoved,
                snapshotsRemoved: oldSnapshots.count
            )
        }
    }

    /// Writes `<name>.tmp`, syncs it, renames it to `name` and syncs the directory.
    private static func writeSnapshotFile(
        _ payload: [UInt8],
        position: UInt64,
        directory: String,
        name: String
    ) throws(LogError) -> UInt64 {
        let path = directory + "/" + name
        let temporary = directory + "/" + LogFileName.temporary(forSnapshot: name)
        let fd = try FileIO.open(temporary, O_WRONLY | O_CREAT | O_TRUNC)
        do throws(LogError) {
            let header = payload.withUnsafeBytes { SnapshotFile.header(position: position, payload: $0) }
            try header.withBytes { bytes throws(LogError) in
                try FileIO.pwriteAll(fd, bytes, at: 0, path: temporary)
            }
            try payload.withBytes { bytes throws(LogError) in
                try FileIO.pwriteAll(fd, bytes, at: UInt64(header.count), path: temporary)
            }
            try FileIO.dataSync(fd, path: temporary)
            FileIO.close(fd)
        } catch {
            FileIO.close(fd)
            _ = unlink(temporary)
            throw error
        }
        try FileIO.rename(temporary, to: path)
        try FileIO.syncDirectory(directory)
        return UInt64(SnapshotFile.headerSize + payload.count)
    }
}
