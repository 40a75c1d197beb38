import ArgumentParser
import Foundation
import ReceiptsClient
import ReceiptsWire
import ZeroMQ

/// Drives an already-running receiptd with one workload and prints what it measured.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Drive a running receiptd with a workload and print events/s, outcomes and latency."
    )

    enum Mode: String, ExpressibleByArgument, CaseIterable {
        case acknowledged
        case fireAndForget = "fire-and-forget"
        /// Through ReceiptsClient: each frame's events in one `send` call, from `--callers` tasks.
        case client
    }

    @Option(help: "receiptd's data directory: its default ipc:// endpoints are derived from it.")
    var dataDir = WorkerEndpoints.defaultDataDirectory

    @Option(help: "Acknowledged ingest endpoint (default ipc://<data-dir>/ingest.sock).")
    var ingest: String?

    @Option(help: "Fire-and-forget ingest endpoint (default ipc://<data-dir>/ingest-sub.sock).")
    var ingestSub: String?

    @Option(help: "Status update endpoint (default ipc://<data-dir>/updates.sock).")
    var publish: String?

    @Option(help: "Query endpoint (default ipc://<data-dir>/query.sock).")
    var query: String?

    @OptionGroup var workload: WorkloadOptions

    @Option(help: "Events in the measured frames.")
    var events = 500_000

    @Option(help: "Events per frame (1 = single-event frames).")
    var batch = 100

    @Option(
        help: """
            acknowledged | fire-and-forget (raw frames on sockets) | client (through ReceiptsClient: \
            each frame's --batch events in one send call, from --callers concurrent tasks).
            """
    )
    var mode = Mode.acknowledged

    @Option(help: "Offered events per second; 0 = flat out.")
    var rate = 0.0

    @Option(help: "Acknowledged: frames in flight per gateway.")
    var window = 16

    @Option(help: "Client mode: concurrent tasks, each awaiting one send call at a time.")
    var callers = 256

    @Flag(help: "Subscribe to status updates and report event → status latency percentiles.")
    var latency = false

    @Option(help: "receiptd's CURVE public key file (RECEIPTD_CURVE_SERVER_PUBLIC_KEY_FILE; needs a client key).")
    var curveServerKeyFile: String?

    @Option(
        help:
            "The load generator's CURVE secret key file, listed as gateway and reader (RECEIPTD_CURVE_CLIENT_SECRET_KEY_FILE)."
    )
    var curveClientKeyFile: String?

    func validate() throws {
        guard events >= 1, batch >= 1, window >= 1, callers >= 1, rate >= 0 else {
            throw ValidationError("events, batch, window and callers must be positive, rate not negative")
        }
        guard mode != .client || rate == 0 else {
            throw ValidationError("client mode runs flat out: its callers cannot be paced to a rate")
        }
    }

    func run() throws {
        // The flags given, else the defaults under the data directory (no environment fallback).
        let endpoints = WorkerEndpoints(
            dataDirectory: URL(fileURLWithPath: dataDir).standardizedFileURL.path,
            ingest: ingest,
            ingestSubscribe: ingestSub,
            publish: publish,
            query: query,
            environment: [:]
        )
        let context = try ZMQContext()
        defer { context.terminate() }
        let shape = workload.shape
        print("workload: \(shape)")
        print(
            "frames: \(batch) events each, \(mode.rawValue), "
                + (mode == .client ? "\(callers) callers, " : "")
                + (rate > 0 ? "\(Int(rate)) events/s offered" : "flat out")
        )
        let set = FrameSet.make(shape: shape, events: events, batchSize: batch, trackUpdates: latency)
        let curve = try CurveClientKeys.fromFlagsOrEnvironment(
            serverPublicKeyFile: curveServerKeyFile,
            clientSecretKeyFile: curveClientKeyFile
        )
        if mode == .client {
            let driver = ClientDriver(
                context: context,
                worker: Cluster.Worker(
                    ingest: endpoints.ingest,
                    query: endpoints.query,
                    publish: endpoints.publish
                ),
                curve: curve
            )
            let result = try driver.drive(
                set,
                conversations: shape.conversations,
                callers: callers,
                trackLatency: latency
            )
            print(result.summary)
            return
        }
        let driver = try LoadDriver(
            context: context,
            ingestEndpoint: endpoints.ingest,
            ingestSubscribeEndpoint: endpoints.ingestSubscribe,
            publishEndpoint: endpoints.publish,
            queryEndpoint: endpoints.query,
            curve: curve
        )
        let result = try driver.drive(
            set,
            gateways: shape.gateways,
            conversations: shape.conversations,
            options: DriveOptions(
                acknowledged: mode == .acknowledged,
                eventsPerSecond: rate > 0 ? rate : nil,
                window: window,
                trackLatency: latency
            )
        )
        print(result.summary)
    }
}
