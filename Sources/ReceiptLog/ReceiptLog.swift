import Glibc
public import Logging
import Synchronization

/// The storage engine: an append-only log of opaque records with group commit, crash recovery
/// and snapshots.
///
/// The service appends each ingest batch as one record and acknowledges it once
/// ``durablePosition`` covers the position ``append(type:payload:)`` returned (``onDurable``
/// says when to look). A plain writer thread does the I/O, so no caller ever blocks Swift's
/// cooperative pool on `fdatasync`. Opening the log recovers it: torn tails of the last segment
/// are truncated and reported, corruption anywhere else stops start-up.
public final class ReceiptLog: Sendable {
    let writer: LogWriter
    private let thread: Mutex<pthread_t?>
    private let directoryLock: LogDirectoryLock
    let replaySegments: [ReplaySegment]
    let replayStart: UInt64
    /// Serialises compactions; never taken by appends.
    let compaction = Mutex(())

    /// What opening the log found and repaired.
    public let recovery: RecoveryReport

    /// The snapshot recovery starts from, mapped until the first compaction or ``close()``.
    let recoverySnapshot: Mutex<MappedSnapshot?>

    /// The snapshot recovery starts from (the newest one that checks out), copied out of its
    /// file; ``withLatestSnapshot(_:)`` reads it in place instead.
    ///
    /// When the newest snapshot file is corrupt this is the older one, and
    /// ``RecoveryReport/invalidSnapshots`` names the file set aside. It is the snapshot found at
    /// open, available until the first ``writeSnapshot(_:covering:)`` (nil after it) or
    /// ``close()``. Each access copies the payload.
    public var latestSnapshot: (position: LogPosition, payload: [UInt8])? {
        self.withLatestSnapshot { position, payload in (position, Array(payload)) }
    }

    /// Lets go of the recovery snapshot's mapping.
    func releaseRecoverySnapshot() {
        self.recoverySnapshot.withLock { $0 = nil }
    }

    /// Opens or creates the log and recovers it, then starts the writer thread.
    ///
    /// Recovery loads the newest valid snapshot, checks every segment, truncates a torn tail of
    /// the last segment (partial record, bad checksum, zeros or garbage with no valid record
    /// after it) and reports it at warning level. It throws on damage anywhere else, naming
    /// the file and byte offset, unless ``LogConfiguration/cutCorruptionAtStart`` is set. A
    /// directory that a seed left part-way (``seed(directory:from:beforeCompleting:)``) is
    /// emptied first, and opens as an empty log (``RecoveryReport/discardedInterruptedSeed``).
    ///
    /// - Parameters:
    ///   - configuration: Where the log lives and its fsync policy.
    ///   - logger: Used for debug detail, the recovery warning and the fatal-error line.
    ///   - onDurable: Called on the writer thread each time ``durablePosition`` advances; keep it
    ///     short (signal the service's loop) and never call ``close()`` from it.
    ///   - onFatal: Called once, on the thread that hit the error (the writer, or a compaction
    ///     whose sync failed), when a write or sync fails; the log then refuses appends, the
    ///     durable position freezes, and the process should stop and recover on restart.
    ///   - onGroupCommit: Called on the writer thread after each group it wrote or synced, before
    ///     the durable position moves past it (for metrics: records per group, sync duration,
    ///     its times); keep it short: acknowledgements wait for it.
    /// - Throws: ``LogError`` with code `.corruption`, `.gap`, `.invalidSnapshot`, `.locked`,
    ///   `.invalidArgument` or `.io`.
    public init(
        configuration: LogConfiguration,
        logger: Logger,
        onDurable: @escaping @Sendable () -> Void,
        onFatal: @escaping @Sendable (LogError) -> Void,
        onGroupCommit: @escaping @Sendable (GroupCommit) -> Void = { _ in }
    ) throws(LogError) {
        try Self.validate(configuration)
        let directory = configuration.directory
        try FileIO.makeDirectories(directory)
        let directoryLock = try LogDirectoryLock.acquire(directory)
        let recovered: Recovered
        do throws(LogError) {
            recovered = try Self.recover(configuration, logger: logger)
        } catch {
            directoryLock.release()
            throw error
        }
        let snapshot: MappedSnapshot?
        do throws(LogError) {
            snapshot = try recovered.snapshot.map { (position, path) throws(LogError) in
                try MappedSnapshot(path: path, position: position)
            }
        } catch {
            FileIO.close(recovered.active.fd)
            directoryLock.release()
            throw error
        }
        self.recovery = recovered.report
        self.recoverySnapshot = Mutex(snapshot)
        self.replaySegments = recovered.replaySegments
        self.replayStart = recovered.replayStart
        self.directoryLock = directoryLock
        let writer = LogWriter(
            configuration: configuration,
            end: recovered.report.endPosition.offset,
            segments: recovered.segments,
            snapshots: recovered.snapshots,
            logger: logger,
            onDurable: onDurable,
            onFatal: onFatal,
            onGroupCommit: onGroupCommit
        )
        self.writer = writer
        let active = recovered.active
        let thread: pthread_t
        switch ThreadBody(name: "log-writer", { writer.run(active) }).start() {
        case .success(let started):
            thread = started
        case .failure(let failure):
            FileIO.close(active.fd)
            directoryLock.release()
            throw LogError(code: .io, message: "cannot start the writer thread", cause: failure)
        }
        self.thread = Mutex(thread)
        logger.debug(
            "receipt log opened",
            metadata: [
                "log.directory": "\(directory)", "log.end": "\(recovered.report.endPosition.offset)",
                "log.replay_records": "\(recovered.report.recordsToReplay)",
            ]
        )
    }

    deinit {
        try? self.close()
    }

    /// Everything at or before this position is durable under the configured policy.
    ///
    /// After ``append(type:payload:)`` returns P, ``onDurable`` fires once this reaches P. It
    /// never moves again after a fatal error.
    public var durablePosition: LogPosition {
        LogPosition(offset: self.writer.durablePosition)
    }

    /// The end of everything appended so far, durable or not.
    public var appendedPosition: LogPosition {
        LogPosition(offset: self.writer.state.withLock { $0.appended })
    }

    /// Bytes appended since the newest snapshot, for deciding when to compact.
    public var bytesSinceSnapshot: UInt64 {
        self.writer.state.withLock { $0.appended - ($0.snapshots.last ?? 0) }
    }

    /// The position of the newest snapshot written or found at open, or nil when there is none.
    public var newestSnapshotPosition: LogPosition? {
        self.writer.state.withLock { $0.snapshots.last }.map { LogPosition(offset: $0) }
    }

    /// Queues a record into the current group and returns the position where it ends.
    ///
    /// Copies the payload and returns without waiting for the disk; blocks only when more
    /// than ``LogConfiguration/maxPendingBytes`` wait for the writer (backpressure).
    /// Thread-safe; records from one thread keep their order.
    ///
    /// - Parameters:
    ///   - type: A tag the service chooses; the log stores it and checksums it.
    ///   - payload: The record's bytes, at most 256 MiB.
    /// - Returns: The record's end position; the record is durable once ``durablePosition``
    ///   reaches it.
    /// - Throws: ``LogError`` `.closed` after ``close()`` or a fatal error (the cause is the
    ///   fatal error), `.invalidArgument` for an oversized payload.
    public func append(type: UInt8, payload: UnsafeRawBufferPointer) throws(LogError) -> LogPosition {
        LogPosition(offset: try self.writer.append(type: type, payload: payload))
    }

    /// Blocks until everything appended so far is written and synced, whatever the policy.
    ///
    /// - Throws: ``LogError`` `.closed` once the log has stopped on a fatal error.
    public func flush() throws(LogError) {
        let target = self.writer.state.withLock { $0.appended }
        try self.writer.waitUntilSynced(target)
    }

    /// Flushes, stops the writer thread and closes the files. Calling it again does nothing.
    ///
    /// - Throws: The fatal ``LogError`` that stopped the log, if one did (so appended records
    ///   may not be durable).
    public func close() throws(LogError) {
        let thread = self.thread.withLock { thread in
            defer { thread = nil }
            return thread
        }
        guard let thread else { return }
        self.releaseRecoverySnapshot()
        self.writer.requestClose()
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
        self.directoryLock.release()
        if let failure = self.writer.state.withLock({ $0.failure }) {
            throw failure
        }
    }

    private static func validate(_ configuration: LogConfiguration) throws(LogError) {
        guard configuration.segmentSize > 0, configuration.maxPendingBytes > 0 else {
            throw LogError(code: .invalidArgument, message: "segmentSize and maxPendingBytes must be positive")
        }
        if case .interval(let milliseconds) = configuration.fsyncPolicy, milliseconds <= 0 {
            throw LogError(code: .invalidArgument, message: "the fsync interval must be positive")
        }
    }
}
