import ReceiptLog
import Synchronization
import ZeroMQ

/// What other threads tell the service loop: stop, a fatal log error, a finished compaction.
///
/// Each sender sets its slot and rings the doorbell; the loop takes the slots when it wakes.
final class ServiceControl: Sendable {
    /// A compaction's outcome, handed from the compaction thread to the loop.
    struct CompactionOutcome: Sendable {
        var result: Result<CompactionReport, LogError>
        var messagesExpired: Int
        /// How long encoding and writing the snapshot took.
        var duration: Duration
    }

    private struct State {
        var stopRequested = false
        var keyReloadRequested = false
        var fatalError: LogError?
        var compaction: CompactionOutcome?
    }

    private let state = Mutex(State())
    let doorbell: Doorbell

    init(doorbell: Doorbell) {
        self.doorbell = doorbell
    }

    /// Asks the loop to shut down gracefully.
    func requestStop() {
        state.withLock { $0.stopRequested = true }
        doorbell.ring()
    }

    /// Asks the loop to re-read the CURVE allowlists.
    func requestKeyReload() {
        state.withLock { $0.keyReloadRequested = true }
        doorbell.ring()
    }

    /// Whether a key reload was asked for since the last call.
    func takeKeyReload() -> Bool {
        state.withLock { state in
            defer { state.keyReloadRequested = false }
            return state.keyReloadRequested
        }
    }

    /// Reports a log failure: the loop stops without acknowledging anything further.
    func reportFatal(_ error: LogError) {
        state.withLock { if $0.fatalError == nil { $0.fatalError = error } }
        doorbell.ring()
    }

    /// Reports that the compaction thread is done.
    func reportCompaction(_ outcome: CompactionOutcome) {
        state.withLock { $0.compaction = outcome }
        doorbell.ring()
    }

    var isStopRequested: Bool { state.withLock { $0.stopRequested } }
    var fatalError: LogError? { state.withLock { $0.fatalError } }

    /// Takes the finished compaction's outcome, if any.
    func takeCompaction() -> CompactionOutcome? {
        state.withLock { state in
            defer { state.compaction = nil }
            return state.compaction
        }
    }
}
