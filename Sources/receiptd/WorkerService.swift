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
struct WorkerService: Service {
    let service: ReceiptService
    let readiness: Readiness
    let logger: Logger

    func run() async throws {
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
