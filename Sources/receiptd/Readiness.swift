import Logging
import Synchronization

/// Where the daemon is in its life, for `/readyz`, and the one "ready" log line.
///
/// The worker and the HTTP server start concurrently; "ready" is logged once both are up
/// (the worker recovered and serving, the HTTP listener bound), naming the bound address so
/// that whoever started receiptd with port 0 can find it.
final class Readiness: Sendable {
    /// The phases `/readyz` reports.
    enum Phase: String, Sendable {
        case recovering, ready, stopping
        /// The worker stopped on a fatal log error; receiptd exits after its grace period.
        case failed
    }

    private struct State {
        var phase = Phase.recovering
        /// The bound HTTP address; nil until bound (or forever with `--http off`).
        var httpAddress: String?
        var announced = false
    }

    private let state = Mutex(State())
    private let servesHTTP: Bool
    private let logger: Logger

    /// - Parameters:
    ///   - servesHTTP: Whether to wait for `httpBound` before logging "ready".
    ///   - logger: Where "ready" goes.
    init(servesHTTP: Bool, logger: Logger) {
        self.servesHTTP = servesHTTP
        self.logger = logger
    }

    var phase: Phase { state.withLock { $0.phase } }

    /// The worker has recovered and bound its endpoints.
    func workerReady() {
        update { if $0.phase == .recovering { $0.phase = .ready } }
    }

    /// The HTTP server listens on `address`.
    func httpBound(_ address: String) {
        update { $0.httpAddress = address }
    }

    /// Graceful shutdown began: `/readyz` answers 503 from now on.
    func stopping() {
        update { if $0.phase != .failed { $0.phase = .stopping } }
    }

    /// The worker stopped on a fatal log error: `/readyz` answers 503 "failed" from now on.
    func failed() {
        update { $0.phase = .failed }
    }

    private func update(_ change: (inout State) -> Void) {
        let announcement = state.withLock { state -> String?? in
            change(&state)
            guard !state.announced, state.phase == .ready, !servesHTTP || state.httpAddress != nil else { return nil }
            state.announced = true
            return .some(state.httpAddress)
        }
        guard let address = announcement else { return }
        logger.info("ready", metadata: ["http.address": "\(address ?? "off")"])
    }
}
