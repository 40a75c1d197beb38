import Logging
import ReceiptLog
import ReceiptsService
import ServiceLifecycle

/// Runs the blocking `ReceiptService.run` on a plain thread of its own (it owns the ZeroMQ
/// sockets and may block in `zmq_poll` and `fdatasync`, which must never happen on Swift's
/// cooperative pool), as a `Service` of the daemon's `ServiceGroup`.
///
/// Graceful shutdown and cancellation both ask the worker to stop: it stops intake, makes
/// everything in flight durable, answers it, closes its sockets and then `run()` returns.
///
/// A fatal log error stops the worker at once, acknowledging nothing more; the error is
/// rethrown (receiptd exits 74) only after `fatalGrace`, while `/readyz` answers "failed" and
/// `/metrics` shows `receiptd_fsync_errors_total`: exiting at once would restart the pod before
/// Prometheus ever saw the error, and its alert could not fire. SIGTERM ends the wait.
struct WorkerService: Service {
    let service: ReceiptService
    let readiness: Readiness
    let fatalGrace: Duration
    let logger: Logger

    func run() async throws {
        do {
            try await withGracefulShutdownHandler {
                try await withTaskCancellationHandler {
                    try await runOnThread()
                } onCancel: {
                    service.stop()
                }
            } onGracefulShutdown: {
                logger.info("shutting down")
                readiness.stopping()
                service.stop()
            }
        } catch let error as ServiceError where error.code == .storage {
            readiness.failed()
            logger.critical(
                "the log failed; the worker stopped, and receiptd exits once /metrics has had time to be scraped",
                metadata: ["error": "\(error)", "fatal_grace.seconds": "\(fatalGrace.components.seconds)"]
            )
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: fatalGrace) }
            throw error
        }
    }

    /// Runs the worker on the `receiptd-worker` thread until `run()` returns.
    ///
    /// - Throws: What `run()` threw; or `ServiceError` with code `system` when the thread cannot
    ///   be started (receiptd then exits naming it, as for the worker's own threads).
    private func runOnThread() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let started = ThreadStarter.standard.startDetached("receiptd-worker", stackBytes: 8 << 20) {
                [service, readiness] in
                do {
                    try service.run(onReady: { readiness.workerReady() })
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            if case .failure(let failure) = started {
                continuation.resume(
                    throwing: ServiceError(.system, "cannot start the receiptd-worker thread", cause: failure)
                )
            }
        }
    }
}
