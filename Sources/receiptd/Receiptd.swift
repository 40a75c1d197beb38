import ArgumentParser
import Foundation
import Logging
import Metrics
import Prometheus
import ReceiptLog
import ReceiptsService
import ServiceLifecycle
import UnixSignals

/// The receiptd daemon: flags (with environment-variable fallbacks) in, a running worker and
/// its HTTP endpoint out, under one `ServiceGroup` that shuts both down on SIGTERM or SIGINT.
@main
struct Receiptd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receiptd",
        abstract: "Chat read receipts over ZeroMQ: ingest events, publish statuses, answer queries.",
        discussion:
            "Every option falls back to the environment variable named in its help, then to the embedded default."
    )

    @Option(
        help:
            "Data directory for the log, snapshots and default ipc endpoints (RECEIPTD_DATA_DIR; default ./receiptd-data)."
    )
    var dataDir: String?

    @Option(help: "Acknowledged ingest endpoint, ROUTER (RECEIPTD_INGEST; default ipc://<data-dir>/ingest.sock).")
    var ingest: String?

    @Option(
        help: "Fire-and-forget ingest endpoint, SUB (RECEIPTD_INGEST_SUB; default ipc://<data-dir>/ingest-sub.sock)."
    )
    var ingestSub: String?

    @Option(help: "Status update endpoint, PUB (RECEIPTD_PUBLISH; default ipc://<data-dir>/updates.sock).")
    var publish: String?

    @Option(help: "Query endpoint, ROUTER (RECEIPTD_QUERY; default ipc://<data-dir>/query.sock).")
    var query: String?

    @Option(
        help:
            "This worker's ordinal (RECEIPTD_WORKER_INDEX; default 0, or with RECEIPTD_WORKER_INDEX_FROM_HOSTNAME=1 the ordinal suffix of a StatefulSet pod's HOSTNAME)."
    )
    var workerIndex: Int?

    @Option(help: "Number of workers sharing the conversations (RECEIPTD_WORKER_COUNT; default 1).")
    var workerCount: Int?

    @Option(help: "When a batch is durable: always | interval:<ms> | none (RECEIPTD_FSYNC; default always).")
    var fsync: String?

    @Option(help: "Largest accepted frame in bytes (RECEIPTD_MAX_FRAME_BYTES; default 16777216).")
    var maxFrameBytes: Int?

    @Option(
        help:
            "Acknowledged frames one ingest connection may have waiting for durability; more are answered UNAVAILABLE (RECEIPTD_MAX_FRAMES_IN_FLIGHT; default 1024)."
    )
    var maxFramesInFlight: Int?

    @Option(
        help: "Most events in one batch; larger ones are refused whole (RECEIPTD_MAX_BATCH_EVENTS; default 10000)."
    )
    var maxBatchEvents: Int?

    @Option(help: "Longest id in UTF-8 bytes; longer ones are refused whole (RECEIPTD_MAX_ID_BYTES; default 256).")
    var maxIdBytes: Int?

    @Option(
        help: "Coalesce updates per message within this many ms; 0 publishes each (RECEIPTD_COALESCE_MS; default 0)."
    )
    var coalesceMs: Int?

    @Option(
        help: """
            Updates waiting for the publishing thread, at most; past it updates are dropped, counted \
            (receiptd_updates_dropped_total) and repaired by subscribers from a snapshot \
            (RECEIPTD_PUBLISH_QUEUE_LIMIT; default 100000).
            """
    )
    var publishQueueLimit: Int?

    @Option(help: "Compact after this many logged bytes (RECEIPTD_COMPACT_BYTES; default 268435456).")
    var compactBytes: UInt64?

    @Option(
        help:
            "Compact at least every this many seconds while there is new data; 0 = never by time (RECEIPTD_COMPACT_INTERVAL_S; default 600)."
    )
    var compactIntervalS: Int?

    @Option(
        help:
            "Messages older than this many seconds leave the state at compaction; 0 = keep (RECEIPTD_RETENTION_S; default 0)."
    )
    var retentionS: Int64?

    @Option(help: "Receipts held for messages not yet arrived, at most (RECEIPTD_PENDING_LIMIT; default 100000).")
    var pendingLimit: Int?

    @Option(help: "Milliseconds a held receipt waits for its message (RECEIPTD_PENDING_LIFETIME_MS; default 60000).")
    var pendingLifetimeMs: Int64?

    @Flag(
        help:
            "Start even if the log is corrupt mid-way, cutting it at the first bad record (RECEIPTD_CUT_CORRUPTION=1)."
    )
    var cutCorruption = false

    @Flag(
        help:
            "Publish no ReadStateUpdate on users' topics (RECEIPTD_NO_READ_STATE_UPDATES=1); by default each change of a user's own read state is."
    )
    var noReadStateUpdates = false

    @Flag(
        help:
            "Replay the log even though it was written with other worker or pending-receipt settings (RECEIPTD_ACCEPT_SETTINGS_CHANGE=1)."
    )
    var acceptSettingsChange = false

    @Flag(
        help:
            "Exit at once when the process that started receiptd is gone (RECEIPTD_EXIT_WITH_PARENT=1): for test harnesses and supervisors whose children must not outlive them."
    )
    var exitWithParent = false

    @Option(
        help: """
            After a fatal log error (a failed write or fdatasync) the worker stops at once, but /metrics stays \
            up this many seconds before receiptd exits 74, so that Prometheus scrapes the error \
            (RECEIPTD_FATAL_GRACE_S; default 30).
            """
    )
    var fatalGraceS: Int?

    @Option(
        help: """
            HTTP address for /metrics, /healthz and /readyz: host:port (port 0 picks a free one, logged \
            in the "ready" line as http.address) or off (RECEIPTD_HTTP; default 127.0.0.1:7080, loopback so \
            that a quick-start daemon exposes nothing to the network).
            """
    )
    var http: String?

    @Option(
        help: """
            File holding this worker's CURVE secret key (Z85, as receiptctl keygen writes it): turns CurveZMQ \
            on for every endpoint (RECEIPTD_CURVE_SECRET_KEY_FILE; default off, plaintext).
            """
    )
    var curveSecretKeyFile: String?

    @Option(
        help:
            "File of gateway public keys, one per line, allowed on both ingest endpoints (RECEIPTD_CURVE_GATEWAY_KEYS)."
    )
    var curveGatewayKeys: String?

    @Option(help: "File of reader public keys, allowed to query and subscribe (RECEIPTD_CURVE_READER_KEYS).")
    var curveReaderKeys: String?

    @Option(
        help:
            "File of operator public keys, allowed to query, subscribe, compact and read stats (RECEIPTD_CURVE_OPERATOR_KEYS)."
    )
    var curveOperatorKeys: String?

    @Option(help: "trace | debug | info | notice | warning | error | critical (RECEIPTD_LOG_LEVEL; default info).")
    var logLevel: String?

    @OptionGroup(title: "Replication (deploy/REPLICATION.md)")
    var replicationOptions: ReplicationOptions

    mutating func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings = Settings(environment: environment)
        let levelName = logLevel ?? environment["RECEIPTD_LOG_LEVEL"] ?? "info"
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError(
                "log level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), got \(levelName)"
            )
        }
        LoggingSystem.bootstrap { label in
            var handler = JSONLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "receiptd")
        if exitWithParent || environment["RECEIPTD_EXIT_WITH_PARENT"] == "1" {
            ParentWatch.start(logger: logger)
        }
        let httpAddress = try Settings.httpAddress(settings.value(http, "RECEIPTD_HTTP", "127.0.0.1:7080"))
        let fatalGraceSeconds = try settings.number(fatalGraceS, "RECEIPTD_FATAL_GRACE_S", 30)
        guard fatalGraceSeconds >= 0 else {
            throw ValidationError("fatal grace must not be negative, got \(fatalGraceSeconds)")
        }
        // Metrics only where someone can read them: with --http off, swift-metrics keeps its
        // no-op handlers (the stats query's counters count regardless).
        let registry = PrometheusCollectorRegistry()
        if httpAddress != nil {
            MetricsSystem.bootstrap(CatalogMetricsFactory(registry: registry))
        }

        var configuration = ServiceConfiguration(
            dataDirectory: dataDir,
            ingest: ingest,
            ingestSubscribe: ingestSub,
            publish: publish,
            query: query,
            environment: environment
        )
        configuration.workerIndex = try settings.number(
            workerIndex,
            "RECEIPTD_WORKER_INDEX",
            try Settings.podOrdinal(environment) ?? 0
        )
        configuration.workerCount = try settings.number(workerCount, "RECEIPTD_WORKER_COUNT", 1)
        configuration.fsyncPolicy = try Settings.fsyncPolicy(settings.value(fsync, "RECEIPTD_FSYNC", "always"))
        configuration.maxFrameBytes = try settings.number(
            maxFrameBytes,
            "RECEIPTD_MAX_FRAME_BYTES",
            configuration.maxFrameBytes
        )
        configuration.maxFramesInFlight = try settings.number(
            maxFramesInFlight,
            "RECEIPTD_MAX_FRAMES_IN_FLIGHT",
            configuration.maxFramesInFlight
        )
        configuration.maxBatchEvents = try settings.number(
            maxBatchEvents,
            "RECEIPTD_MAX_BATCH_EVENTS",
            configuration.maxBatchEvents
        )
        configuration.maxIDBytes = try settings.number(maxIdBytes, "RECEIPTD_MAX_ID_BYTES", configuration.maxIDBytes)
        configuration.coalesceMilliseconds = try settings.number(coalesceMs, "RECEIPTD_COALESCE_MS", 0)
        configuration.publishQueueLimit = try settings.number(
            publishQueueLimit,
            "RECEIPTD_PUBLISH_QUEUE_LIMIT",
            configuration.publishQueueLimit
        )
        configuration.compactAfterBytes = try settings.number(
            compactBytes,
            "RECEIPTD_COMPACT_BYTES",
            configuration.compactAfterBytes
        )
        configuration.compactIntervalSeconds = try settings.number(
            compactIntervalS,
            "RECEIPTD_COMPACT_INTERVAL_S",
            configuration.compactIntervalSeconds
        )
        configuration.retentionSeconds = try settings.number(retentionS, "RECEIPTD_RETENTION_S", 0)
        configuration.pendingReceiptLimit = try settings.number(
            pendingLimit,
            "RECEIPTD_PENDING_LIMIT",
            configuration.pendingReceiptLimit
        )
        configuration.pendingReceiptLifetimeMilliseconds = try settings.number(
            pendingLifetimeMs,
            "RECEIPTD_PENDING_LIFETIME_MS",
            configuration.pendingReceiptLifetimeMilliseconds
        )
        configuration.cutCorruptionAtStart = cutCorruption || environment["RECEIPTD_CUT_CORRUPTION"] == "1"
        configuration.publishesReadStates =
            !(noReadStateUpdates || environment["RECEIPTD_NO_READ_STATE_UPDATES"] == "1")
        configuration.acceptSettingsChange =
            acceptSettingsChange || environment["RECEIPTD_ACCEPT_SETTINGS_CHANGE"] == "1"
        configuration.curve = try settings.curve(
            secretKeyFile: curveSecretKeyFile,
            allowlistFiles: [.gateway: curveGatewayKeys, .reader: curveReaderKeys, .operator: curveOperatorKeys]
        )

        configuration.replication = try replicationOptions.settings(
            settings,
            dataDirectory: configuration.dataDirectory,
            workerIndex: configuration.workerIndex
        )
        let coordinator = try makeCoordinator(settings, configuration: configuration, logger: logger)
        let service: ReceiptService
        do {
            service = try ReceiptService(configuration: configuration, logger: logger, coordinator: coordinator)
        } catch {
            throw ValidationError(error.description)
        }
        signal(SIGPIPE, SIG_IGN)
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let readiness = Readiness(servesHTTP: httpAddress != nil, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = []
        if let httpAddress {
            let server = HTTPServer.make(
                host: httpAddress.host,
                port: httpAddress.port,
                registry: registry,
                readiness: readiness,
                workerIndex: configuration.workerIndex,
                workerCount: { service.workerCount },
                role: { service.role },
                logger: Logger(label: "receiptd.http")
            )
            services.append(.init(service: server))
        }
        services.append(
            .init(
                service: KeyReloadService(
                    hangups: hangups,
                    service: service,
                    curveEnabled: configuration.curve != nil,
                    logger: logger
                ),
                successTerminationBehavior: .ignore
            )
        )
        // Last in the list, so graceful shutdown reaches it first: the worker drains while
        // /readyz already answers "stopping"; the HTTP server stops once the worker is done.
        services.append(
            .init(
                service: WorkerService(
                    service: service,
                    readiness: readiness,
                    // Without HTTP nobody scrapes: no reason to wait.
                    fatalGrace: httpAddress == nil ? .zero : .seconds(fatalGraceSeconds),
                    logger: logger
                ),
                successTerminationBehavior: .gracefullyShutdownGroup
            )
        )
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services,
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger
            )
        )
        do {
            try await group.run()
        } catch let error as ServiceError {
            logger.critical("receiptd stopped on an error", metadata: ["error": "\(error)"])
            throw ExitCode(error.code == .storage ? 74 : 1)
        } catch {
            logger.critical("receiptd stopped on an error", metadata: ["error": "\(error)"])
            throw ExitCode(1)
        }
    }
}
