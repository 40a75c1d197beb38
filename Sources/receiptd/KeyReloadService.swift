import Logging
import ReceiptsService
import ServiceLifecycle
import UnixSignals

/// Asks the worker to re-read its CURVE allowlists on every SIGHUP, until graceful shutdown.
///
/// The signal is trapped before the group starts (the caller makes `hangups`), so a SIGHUP
/// right after "ready" reloads instead of killing the process.
struct KeyReloadService: Service {
    let hangups: UnixSignalsSequence
    let service: ReceiptService
    let curveEnabled: Bool
    let logger: Logger

    func run() async {
        for await _ in hangups.cancelOnGracefulShutdown() {
            if curveEnabled {
                logger.info("SIGHUP: reloading the client key lists")
                service.reloadKeys()
            } else {
                logger.info("SIGHUP ignored: CURVE is off, there are no key lists to reload")
            }
        }
    }
}
