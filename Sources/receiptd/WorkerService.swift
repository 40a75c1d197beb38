import Foundation
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

    private func runOnThread() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread { [service, readiness] in
                nameCurrentThread("receiptd-worker")
                do {
                    try service.run(onReady: { readiness.workerReady() })
                    continuation.resume()
                } catch {
                    continuation.resume(throwing: error)
                }
            }
            thread.stackSize = 8 << 20
            thread.start()
        }
    }
}
