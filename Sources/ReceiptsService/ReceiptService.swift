public import Logging
import ReceiptLog
import ReceiptsCore
public import ReceiptsReplication
public import ReceiptsWire
import ZeroMQ

#if canImport(Glibc)
import Glibc
#endif

/// The receiptd worker: recovers its state from the log, then serves ingest, status
/// updates and queries until asked to stop.
///
/// `run()` blocks the calling thread, which becomes the only owner of the ZeroMQ sockets
/// and the engine; `stop()` may be called from any thread (a signal handler's queue).
public final class ReceiptService: Sendable {
    private let configuration: ServiceConfiguration
    private let logger: Logger
    private let control: ServiceControl
    private let coordinator: (any Coordinator)?

    /// Prepares a worker; nothing is opened until `run()`.
    /// - Parameter coordinator: Decides the member's role when `configuration.replication`'s
    ///   role is `.elected` (and only then).
    /// - Throws: `ServiceError` if the configuration is invalid (an elected role without a
    ///   coordinator, say) or the wake-up pipe cannot be made.
    public init(
        configuration: ServiceConfiguration,
        logger: Logger,
        coordinator: (any Coordinator)? = nil
    ) throws(ServiceError) {
        try configuration.validate()
        guard (configuration.replication?.role == .elected) == (coordinator != nil) else {
            throw ServiceError(.configuration, "a coordinator is needed exactly when the replication role is elected")
        }
        self.configuration = configuration
        self.logger = logger
        self.coordinator = coordinator
        do {
            self.control = ServiceControl(doorbell: try Doorbell())
        } catch {
            throw ServiceError(.system, "cannot make the loop's wake-up pipe", cause: error)
        }
    }

    /// Recovers, binds the endpoints and serves until `stop()`; then stops intake, makes
    /// everything in flight durable, answers it, and closes the sockets.
    /// - Parameter onReady: called once every endpoint is bound (after recovery).
    /// - Throws: `ServiceError` if recovery, binding or the log fails.
    public func run(onReady: () -> Void = {}) throws(ServiceError) {
        if let replication = configuration.replication, let coordinator {
            try ReplicatedMember(
                configuration: configuration,
                settings: replication,
                coordinator: coordinator,
                logger: logger,
                control: control,
                metrics: ReplicationMetrics()
            ).run(onReady: onReady)
            return
        }
        if let replication = configuration.replication, case .standby(let primaryEndpoint) = replication.role {
            let loop = try StandbyLoop(
                configuration: configuration,
                settings: replication,
                primaryEndpoint: primaryEndpoint,
                logger: logger,
                control: control
            )
            try loop.run(onReady: onReady)
            return
        }
        let loop = try ServiceLoop(configuration: configuration, logger: logger, control: control)
        try loop.run(onReady: onReady)
    }

    /// The worker count the log holds (the one the worker serves by, and after a rebalance the
    /// new one); nil until recovery has ended. Safe from any thread.
    public var workerCount: Int? {
        control.workerCount
    }

    /// The member's role when the coordination service decides it (`/readyz` answers by it);
    /// nil for a worker without an elected role, and until the first role is taken. Safe from
    /// any thread.
    public var role: MemberRole? {
        control.role
    }

    /// Asks the running worker to re-read its CURVE allowlist files (receiptd does on SIGHUP).
    /// Admitted connections stay open; a list that fails to load leaves the previous one in force.
    /// Safe from any thread; does nothing without CURVE.
    public func reloadKeys() {
        control.requestKeyReload()
    }

    /// Asks `run()` to shut down gracefully; an elected primary first hands its ordinal over to
    /// an in-sync standby (deploy/REPLICATION.md, section 12.2). Safe from any thread; idempotent.
    public func stop() {
        control.requestStop()
    }
}
