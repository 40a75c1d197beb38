extension ReceiptLog {
    /// Replaces a closed log with a primary's snapshot, durably: a standby that needs records
    /// its primary no longer holds starts over from the primary's snapshot, and its log then
    /// continues at the snapshot's position with the primary's positions.
    ///
    /// The log must be closed (this takes its lock, as ``truncate(directory:to:)`` does). Each
    /// step is durable before the next: the incoming file is checked (whole, a valid snapshot
    /// at its position; nothing changes if not) and synced; a `SEEDING` marker is written;
    /// every segment, snapshot, snapshot temporary and set-aside snapshot is deleted; the
    /// incoming file is renamed to the snapshot's name; `beforeCompleting` runs; the marker
    /// goes. Opening a directory that still holds the marker (a crash, or an error, part-way)
    /// discards every segment and snapshot and starts an empty log
    /// (``RecoveryReport/discardedInterruptedSeed``), so the directory opens as the old log, an
    /// empty one, or the seeded one, never a mix; seeding again from a new transfer is the way on.
    ///
    /// - Parameters:
    ///   - directory: The log directory: the incoming snapshot's ``IncomingSnapshot/directory``.
    ///   - snapshot: The snapshot received, complete; a successful seed uses up its file.
    ///   - beforeCompleting: Runs once the snapshot is in place and before the marker goes: the
    ///     service writes the files that belong with the snapshot (its term history, its engine
    ///     settings) into the directory, so that a crash before they are written discards the
    ///     seed too. When it throws, the seed stops there and throws that error, leaving the
    ///     marker.
    /// - Throws: ``LogError`` `.locked` while the log is open, `.invalidArgument` when
    ///   `snapshot` belongs to another directory, `.invalidSnapshot` when it is incomplete or
    ///   invalid, `.closed` when it was discarded or used, what `beforeCompleting` throws,
    ///   `.io` or `.fsyncFailed`. An error before the marker is written (every `.locked`,
    ///   `.invalidArgument`, `.invalidSnapshot` and `.closed`) changes nothing; one after it
    ///   leaves the marker, and the directory opens as an empty log.
    public static func seed(
        directory: String,
        from snapshot: IncomingSnapshot,
        beforeCompleting: () throws(LogError) -> Void
    ) throws(LogError) {
        guard snapshot.directory == directory else {
            throw LogError(
                code: .invalidArgument,
                message: "the incoming snapshot was written into \(snapshot.directory), not \(directory)"
            )
        }
        let directoryLock = try LogDirectoryLock.acquire(directory)
        defer { directoryLock.release() }
        try snapshot.checkAndSync()
        try LogSeeding.mark(directory)
        try LogSeeding.removeLogFiles(in: directory, keeping: snapshot.name)
        try FileIO.rename(snapshot.path, to: directory + "/" + LogFileName.snapshot(position: snapshot.position.offset))
        snapshot.seeded()
        try FileIO.syncDirectory(directory)
        try beforeCompleting()
        try LogSeeding.unmark(directory)
    }
}

extension ReceiptLog {
    /// Empties a closed log's directory: every segment and snapshot goes, so that the log opens
    /// empty. A standby whose log cannot be cut back to where its primary's history parts (no
    /// snapshot old enough) starts over this way, and its primary then seeds it.
    ///
    /// Marked as a seed is, so that a crash part-way leaves a directory that opens empty too.
    ///
    /// - Throws: ``LogError`` `.locked` while the log is open, `.io` or `.fsyncFailed`.
    public static func empty(directory: String) throws(LogError) {
        let directoryLock = try LogDirectoryLock.acquire(directory)
        defer { directoryLock.release() }
        try LogSeeding.mark(directory)
        _ = try LogSeeding.discardInterrupted(directory)
    }
}
