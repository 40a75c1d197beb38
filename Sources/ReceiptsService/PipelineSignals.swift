import ReceiptLog
import ReceiptsCore
import Synchronization

/// What the log's and the compaction's threads tell a `ReceiptPipeline`: a fatal log error, a
/// finished compaction. Each sender sets its slot and calls `wake` (the worker's doorbell); the
/// pipeline takes the slots on its own thread.
final class PipelineSignals: Sendable {
    /// A compaction's outcome, handed from the compaction thread to the pipeline.
    struct CompactionOutcome: Sendable {
        var result: Result<CompactionReport, LogError>
        var messagesExpired: Int
        /// How long encoding and writing the snapshot took.
        var duration: Duration
    }

    private struct State {
        var fatalError: LogError?
        var compaction: CompactionOutcome?
    }

    private let state = Mutex(State())
    /// Wakes the pipeline's thread.
    let wake: @Sendable () -> Void
    /// Starts the compaction threads.
    private let threads: ThreadStarter

    /// - Parameters:
    ///   - wake: Wakes the pipeline's thread.
    ///   - threads: Starts the compaction threads.
    init(wake: @escaping @Sendable () -> Void, threads: ThreadStarter = .standard) {
        self.wake = wake
        self.threads = threads
    }

    /// Reports a log failure: the pipeline acknowledges nothing further.
    func reportFatal(_ error: LogError) {
        state.withLock { if $0.fatalError == nil { $0.fatalError = error } }
        wake()
    }

    /// Encodes `state` and writes it as the snapshot covering `position` on a `receiptd-snap`
    /// thread of its own, then reports the outcome here (the caller takes it with
    /// `takeCompaction`): how a primary's pipeline and a standby compact without waiting.
    ///
    /// A thread that cannot be started is reported at once as a failed compaction (a `LogError`
    /// with code `io` whose cause is the `pthread_create` error), so the caller counts it,
    /// answers whoever asked for it and tries again after its pause, as after a failed write.
    ///
    /// - Parameter messagesExpired: What retention expired just before, reported with the outcome.
    func writeSnapshotInBackground(
        _ state: ReceiptEngine,
        covering position: LogPosition,
        in log: ReceiptLog,
        messagesExpired: Int
    ) {
        let start = threads.startDetached("receiptd-snap") {
            let started = ContinuousClock.now
            let payload = state.encodedState()
            let result = Result { () throws(LogError) in try log.writeSnapshot(payload, covering: position) }
            self.reportCompaction(
                CompactionOutcome(
                    result: result,
                    messagesExpired: messagesExpired,
                    duration: ContinuousClock.now - started
                )
            )
        }
        if case .failure(let failure) = start {
            reportCompaction(
                CompactionOutcome(
                    result: .failure(
                        LogError(code: .io, message: "cannot start the receiptd-snap thread", cause: failure)
                    ),
                    messagesExpired: messagesExpired,
                    duration: .zero
                )
            )
        }
    }

    /// Reports that the compaction thread is done.
    func reportCompaction(_ outcome: CompactionOutcome) {
        state.withLock { $0.compaction = outcome }
        wake()
    }

    var fatalError: LogError? { state.withLock { $0.fatalError } }

    /// Takes the finished compaction's outcome, if any.
    func takeCompaction() -> CompactionOutcome? {
        state.withLock { state in
            defer { state.compaction = nil }
            return state.compaction
        }
    }
}
