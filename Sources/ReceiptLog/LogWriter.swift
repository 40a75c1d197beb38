import Glibc
import Logging
import Synchronization

/// The group-commit engine: the state appenders share, and the plain thread that writes it.
///
/// Appenders copy records into a buffer under a `Mutex` and never touch the disk. The writer
/// thread takes the whole buffer at once, writes it with one `pwrite` and one `fdatasync`, then
/// publishes the new durable position. While it waits for the disk, new appends collect into
/// the next group, so one sync covers every batch that arrived during the previous one.
final class LogWriter: Sendable {
    /// The segment file the writer thread appends to; owned by that thread alone.
    struct ActiveSegment: Sendable {
        var fd: Int32
        var start: UInt64
        var path: String

        /// The file offset of a log position inside this segment.
        func fileOffset(of position: UInt64) -> UInt64 {
            position - self.start + UInt64(RecordFormat.segmentHeaderSize)
        }
    }

    private enum Step {
        case write(start: UInt64)
        case sync(upTo: UInt64)
        case sleep(deadline: UInt64?)
        case exit
    }

    let state: Mutex<WriterState>
    /// Mirrors the durable position so readers need no lock.
    private let durable: Atomic<UInt64>
    private let wakeup = Semaphore()
    let directory: String
    private let policy: FsyncPolicy
    private let segmentSize: UInt64
    private let maxPendingBytes: Int
    private let faultInjection: FaultInjection?
    let logger: Logger
    private let onDurable: @Sendable () -> Void
    private let onFatal: @Sendable (LogError) -> Void
    private let onGroupCommit: @Sendable (GroupCommit) -> Void

    init(
        configuration: LogConfiguration,
        end: UInt64,
        segments: [UInt64],
        snapshots: [UInt64],
        logger: Logger,
        onDurable: @escaping @Sendable () -> Void,
        onFatal: @escaping @Sendable (LogError) -> Void,
        onGroupCommit: @escaping @Sendable (GroupCommit) -> Void
    ) {
        var pending: [UInt8] = []
        pending.reserveCapacity(min(configuration.maxPendingBytes, 1 << 20))
        self.state = Mutex(
            WriterState(
                pending: pending,
                pendingStart: end,
                appended: end,
                appendSegmentStart: segments.last ?? end,
                written: end,
                synced: end,
                syncRequested: end,
                segments: segments,
                snapshots: snapshots
            )
        )
        self.durable = Atomic(end)
        self.directory = configuration.directory
        self.policy = configuration.fsyncPolicy
        self.segmentSize = UInt64(max(configuration.segmentSize, 1))
        self.maxPendingBytes = configuration.maxPendingBytes
        self.faultInjection = configuration.faultInjection
        self.logger = logger
        self.onDurable = onDurable
        self.onFatal = onFatal
        self.onGroupCommit = onGroupCommit
    }

    var durablePosition: UInt64 {
        self.durable.load(ordering: .acquiring)
    }

    // MARK: Appending (any thread)

    private enum AppendOutcome {
        case appended(end: UInt64, wakeWriter: Bool)
        case full
        case failed(LogError)
    }

    /// Copies one framed record into the pending group; blocks only while the group is full.
    ///
    /// - Parameter start: Where the caller says the record must start (a standby appending
    ///   a primary's record), checked under the lock against the appended end; nil appends at
    ///   the end, wherever it is.
    func append(type: UInt8, payload: UnsafeRawBufferPointer, at start: UInt64? = nil) throws(LogError) -> UInt64 {
        guard payload.count <= RecordFormat.maxPayload else {
            throw LogError(
                code: .invalidArgument,
                message: "record payload of \(payload.count) bytes exceeds the limit of \(RecordFormat.maxPayload)"
            )
        }
        let header = RecordFormat.RecordHeader(
            payloadLength: payload.count,
            type: type,
            checksum: RecordFormat.recordChecksum(type: type, payload: payload)
        )
        let frameLength = header.recordLength
        while true {
            let outcome = self.state.withLock { state -> AppendOutcome in
                if let refusal = Self.refusal(state) { return .failed(refusal) }
                if let start, start != state.appended {
                    return .failed(
                        LogError(
                            code: .positionMismatch,
                            message:
                                "a record for position \(start) cannot be appended at the log's end \(state.appended)"
                        )
                    )
                }
                if !state.pending.isEmpty && state.pending.count + frameLength > self.maxPendingBytes {
                    return .full
                }
                let segmentUsed = state.appended - state.appendSegmentStart
                if segmentUsed > 0 && (state.rollRequested || segmentUsed + UInt64(frameLength) > self.segmentSize) {
                    state.pendingRolls.append(state.appended)
                    state.appendSegmentStart = state.appended
                }
                state.rollRequested = false
                header.append(to: &state.pending)
                state.pending.append(contentsOf: payload)
                state.pendingRecords += 1
                state.appended += UInt64(frameLength)
                let wake = state.writerIdle
                state.writerIdle = false
                return .appended(end: state.appended, wakeWriter: wake)
            }
            switch outcome {
            case .appended(let end, let wakeWriter):
                if wakeWriter { self.wakeup.signal() }
                return end
            case .failed(let error):
                throw error
            case .full:
                self.waitForProgress { state in
                    state.pending.isEmpty || state.pending.count + frameLength <= self.maxPendingBytes
                }
            }
        }
    }

    /// Blocks until the writer has synced everything up to `target`, whatever the policy.
    func waitUntilSynced(_ target: UInt64) throws(LogError) {
        while true {
            let done = try self.state.withLock { state throws(LogError) -> Bool in
                if let failure = state.failure { throw Self.stopped(by: failure) }
                if state.synced >= target { return true }
                state.syncRequested = max(state.syncRequested, target)
                return false
            }
            if done { return }
            self.waitForProgress { state in state.synced >= target || state.failure != nil }
        }
    }

    /// Sleeps until the writer next makes progress, unless `satisfied` already holds.
    private func waitForProgress(unless satisfied: (inout WriterState) -> Bool) {
        let semaphore = Semaphore()
        let (registered, wake) = self.state.withLock { state -> (Bool, Bool) in
            if satisfied(&state) || state.failure != nil
                || state.closing && state.pending.isEmpty && state.synced == state.written
            {
                return (false, false)
            }
            state.waiters.append(semaphore)
            let wake = state.writerIdle
            state.writerIdle = false
            return (true, wake)
        }
        if wake { self.wakeup.signal() }
        if registered { semaphore.wait() }
    }

    /// Asks the writer to drain, sync and exit.
    func requestClose() {
        self.state.withLock { state in
            state.closing = true
            state.syncRequested = state.appended
        }
        self.wakeup.signal()
    }

    /// Records a fatal error once: the log stops accepting appends, the durable position
    /// freezes, and `onFatal` is told.
    func fail(_ error: LogError) {
        let (first, waiters) = self.state.withLock { state -> (Bool, [Semaphore]) in
            guard state.failure == nil else { return (false, []) }
            state.failure = error
            defer { state.waiters = [] }
            return (true, state.waiters)
        }
        guard first else { return }
        for waiter in waiters { waiter.signal() }
        self.wakeup.signal()
        self.logger.critical(
            "receipt log stopped: \(error)",
            metadata: ["log.file": "\(error.file ?? self.directory)", "log.error": "\(error.code)"]
        )
        self.onFatal(error)
    }

    static func stopped(by failure: LogError) -> LogError {
        LogError(code: .closed, message: "the log stopped after a fatal error", cause: failure)
    }

    /// Why the log takes no more work (appends, cursors, pins): it stopped on a fatal error, or
    /// it is closing; nil while it runs.
    static func refusal(_ state: borrowing WriterState) -> LogError? {
        if let failure = state.failure { return Self.stopped(by: failure) }
        if state.closing { return LogError(code: .closed, message: "the log is closed") }
        return nil
    }

    // MARK: The writer thread

    /// The writer thread's loop: take a group, write it, sync it, publish, repeat.
    func run(_ initial: ActiveSegment) {
        var segment = initial
        var group: [UInt8] = []
        var rolls: [UInt64] = []
        var groupRecords = 0
        var lastSync = Self.monotonicNanoseconds()
        var syncs = 0
        let interval: UInt64? =
            if case .interval(let milliseconds) = self.policy { UInt64(max(milliseconds, 0)) * 1_000_000 } else { nil }
        defer { FileIO.close(segment.fd) }

        /// Syncs `segment`.
        /// - Returns: How long the sync took.
        func syncSegment(_ segment: ActiveSegment) throws(LogError) -> Duration {
            let started = Self.monotonicNanoseconds()
            if let errno = self.faultInjection?.syncError(syncs) {
                throw LogError(
                    code: .fsyncFailed,
                    message: "fdatasync failed",
                    cause: SystemCallError(call: "fdatasync", errno: errno),
                    file: segment.path
                )
            }
            try FileIO.dataSync(segment.fd, path: segment.path)
            syncs += 1
            lastSync = Self.monotonicNanoseconds()
            return .nanoseconds(lastSync - started)
        }

        while true {
            let (step, waiters) = self.state.withLock { state -> (Step, [Semaphore]) in
                state.writerIdle = false
                let waiters = state.waiters
                state.waiters = []
                if state.failure != nil { return (.exit, waiters) }
                if !state.pending.isEmpty {
                    swap(&state.pending, &group)
                    swap(&state.pendingRolls, &rolls)
                    groupRecords = state.pendingRecords
                    state.pendingRecords = 0
                    let start = state.pendingStart
                    state.pendingStart = state.appended
                    return (.write(start: start), waiters)
                }
                if state.synced < state.written {
                    if state.syncRequested > state.synced || state.closing {
                        return (.sync(upTo: state.written), waiters)
                    }
                    if let interval {
                        let deadline = lastSync + interval
                        if Self.monotonicNanoseconds() >= deadline { return (.sync(upTo: state.written), waiters) }
                        state.writerIdle = true
                        return (.sleep(deadline: deadline), waiters)
                    }
                }
                if state.closing { return (.exit, waiters) }
                state.writerIdle = true
                return (.sleep(deadline: nil), waiters)
            }
            for waiter in waiters { waiter.signal() }

            do throws(LogError) {
                switch step {
                case .write(let start):
                    let started = Self.monotonicNanoseconds()
                    try self.write(group, from: start, rolls: rolls, into: &segment, sync: syncSegment)
                    let end = start + UInt64(group.count)
                    let written = Self.monotonicNanoseconds()
                    let syncNow: Bool
                    switch self.policy {
                    case .always: syncNow = true
                    case .interval: syncNow = written >= lastSync + (interval ?? 0)
                    case .none: syncNow = false
                    }
                    var syncDuration: Duration?
                    if syncNow { syncDuration = try syncSegment(segment) }
                    group.removeAll(keepingCapacity: true)
                    rolls.removeAll(keepingCapacity: true)
                    // Reported before it is published: whoever sees the group durable finds it.
                    self.onGroupCommit(
                        GroupCommit(
                            records: groupRecords,
                            syncDuration: syncDuration,
                            end: LogPosition(offset: end),
                            startedNanoseconds: started,
                            writtenNanoseconds: written,
                            finishedNanoseconds: syncNow ? lastSync : written
                        )
                    )
                    self.publish(written: end, synced: syncNow ? end : nil)
                case .sync(let target):
                    let started = Self.monotonicNanoseconds()
                    let syncDuration = try syncSegment(segment)
                    self.onGroupCommit(
                        GroupCommit(
                            records: 0,
                            syncDuration: syncDuration,
                            end: LogPosition(offset: target),
                            startedNanoseconds: started,
                            writtenNanoseconds: started,
                            finishedNanoseconds: lastSync
                        )
                    )
                    self.publish(written: target, synced: target)
                case .sleep(let deadline):
                    if let deadline {
                        _ = self.wakeup.wait(until: Self.realtimeDeadline(afterMonotonic: deadline))
                    } else {
                        self.wakeup.wait()
                    }
                case .exit:
                    let waiters = self.state.withLock { state in
                        defer { state.waiters = [] }
                        return state.waiters
                    }
                    for waiter in waiters { waiter.signal() }
                    return
                }
            } catch {
                self.fail(error)
                return
            }
        }
    }

    /// Publishes progress, wakes waiters, and tells the service when durability advanced.
    private func publish(written: UInt64, synced: UInt64?) {
        let (advanced, waiters) = self.state.withLock { state -> (Bool, [Semaphore]) in
            state.written = written
            if let synced { state.synced = synced }
            let durable = self.policy == .always ? state.synced : state.written
            let advanced = durable > self.durable.load(ordering: .relaxed)
            self.durable.store(durable, ordering: .releasing)
            defer { state.waiters = [] }
            return (advanced, state.waiters)
        }
        for waiter in waiters { waiter.signal() }
        if advanced { self.onDurable() }
    }

    /// Writes one group: one `pwrite` per segment it touches, rolling segments at `rolls`
    /// (each the start of a record in this group). A finished segment is synced before the next
    /// one is created, so only the last segment can ever have a torn tail.
    private func write(
        _ group: [UInt8],
        from start: UInt64,
        rolls: [UInt64],
        into segment: inout ActiveSegment,
        sync: (ActiveSegment) throws(LogError) -> Duration
    ) throws(LogError) {
        try group.withBytes { bytes throws(LogError) in
            var position = start
            func writeChunk(upTo end: UInt64) throws(LogError) {
                guard end > position else { return }
                let chunk = UnsafeRawBufferPointer(rebasing: bytes[Int(position - start)..<Int(end - start)])
                try FileIO.pwriteAll(segment.fd, chunk, at: segment.fileOffset(of: position), path: segment.path)
                position = end
            }
            for roll in rolls {
                try writeChunk(upTo: roll)
                // A roll's sync delays acknowledgements like any other: it is reported too.
                let started = Self.monotonicNanoseconds()
                let syncDuration = try sync(segment)
                self.onGroupCommit(
                    GroupCommit(
                        records: 0,
                        syncDuration: syncDuration,
                        end: LogPosition(offset: roll),
                        startedNanoseconds: started,
                        writtenNanoseconds: started,
                        finishedNanoseconds: Self.monotonicNanoseconds()
                    )
                )
                // The next segment first: if it cannot be made, `segment` still owns an open
                // descriptor, which the writer's `defer` closes once. Closing it before would
                // let that `defer` close the number again, by then perhaps another file's.
                let next = try self.createSegment(start: roll)
                FileIO.close(segment.fd)
                segment = next
            }
            try writeChunk(upTo: start + UInt64(bytes.count))
        }
    }

    /// Creates a segment file with its header, synced, and its directory entry synced.
    func createSegment(start: UInt64) throws(LogError) -> ActiveSegment {
        let segment = try Self.createSegmentFile(directory: self.directory, start: start)
        self.state.withLock { $0.segments.append(start) }
        self.logger.debug("started segment", metadata: ["log.file": "\(segment.path)", "log.position": "\(start)"])
        return segment
    }

    static func createSegmentFile(directory: String, start: UInt64) throws(LogError) -> ActiveSegment {
        let path = directory + "/" + LogFileName.segment(start: start)
        let fd = try FileIO.open(path, O_WRONLY | O_CREAT | O_EXCL)
        do throws(LogError) {
            try RecordFormat.segmentHeader(start: start).withBytes { header throws(LogError) in
                try FileIO.pwriteAll(fd, header, at: 0, path: path)
            }
            try FileIO.dataSync(fd, path: path)
            try FileIO.syncDirectory(directory)
        } catch {
            FileIO.close(fd)
            throw error
        }
        return ActiveSegment(fd: fd, start: start, path: path)
    }

    private static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }

    /// `sem_timedwait` wants a CLOCK_REALTIME deadline; convert from a monotonic one.
    private static func realtimeDeadline(afterMonotonic deadline: UInt64) -> timespec {
        let remaining = deadline &- monotonicNanoseconds()
        let wait = remaining > deadline ? 0 : remaining
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let total = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec) + wait
        return timespec(tv_sec: Int(total / 1_000_000_000), tv_nsec: Int(total % 1_000_000_000))
    }
}
