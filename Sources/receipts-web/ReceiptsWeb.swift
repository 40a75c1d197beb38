import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import ReceiptsClient
import ZeroMQ

/// The reference chat gateway: a demo chat backend in memory, one static page, and a WebSocket
/// bridge that turns what browsers do into receiptd events and pushes receiptd's status updates
/// back to them.
@main
struct ReceiptsWeb: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipts-web",
        abstract: "A reference chat gateway: a demo chat in the browser, with receipts kept by receiptd."
    )

    @Option(help: "Where to serve HTTP and WebSocket, host:port (env RECEIPTS_WEB_HTTP).")
    var http: String = ProcessInfo.processInfo.environment["RECEIPTS_WEB_HTTP"] ?? "127.0.0.1:8080"

    @Option(
        help: "A receiptd worker's --data-dir, once per worker in ordinal order; its ipc:// endpoints are used."
    )
    var receiptdDataDir: [String] = []

    @Option(
        help: "A receiptd worker's endpoints as ingest,query,publish, once per worker in ordinal order."
    )
    var receiptdEndpoints: [String] = []

    @Option(
        help: "A prefix for every id sent to receiptd, so that runs on one data dir do not collide; random if empty."
    )
    var namespace: String = ""

    @Option(
        help:
            "receiptd's CURVE public key file (RECEIPTD_CURVE_SERVER_PUBLIC_KEY_FILE); with a client key, CurveZMQ to every worker."
    )
    var curveServerKeyFile: String?

    @Option(
        help:
            "This gateway's CURVE secret key file; its public key must be listed as gateway and reader (RECEIPTD_CURVE_CLIENT_SECRET_KEY_FILE)."
    )
    var curveClientKeyFile: String?

    @Option(help: "The log level (trace, debug, info, notice, warning, error).")
    var logLevel: String = "info"

    func validate() throws {
        guard receiptdDataDir.isEmpty != receiptdEndpoints.isEmpty else {
            throw ValidationError("give --receiptd-data-dir or --receiptd-endpoints (one per worker), not both")
        }
        guard HostAndPort(http) != nil else { throw ValidationError("--http wants host:port, got \(http)") }
        for endpoints in receiptdEndpoints where endpoints.split(separator: ",").count != 3 {
            throw ValidationError("--receiptd-endpoints wants ingest,query,publish, got \(endpoints)")
        }
    }

    func run() async throws {
        var logger = Logger(label: "receipts-web")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        let workers: [Cluster.Worker] =
            receiptdDataDir.isEmpty
            ? receiptdEndpoints.map { line in
                let parts = line.split(separator: ",").map(String.init)
                return Cluster.Worker(ingest: parts[0], query: parts[1], publish: parts[2])
            }
            : receiptdDataDir.map { Cluster.Worker(dataDirectory: $0) }
        var configuration = ReceiptsClient.Configuration(cluster: Cluster(workers: workers))
        configuration.subscriptionSettleMilliseconds = 300
        do {
            configuration.curve = try CurveClientKeys.fromFlagsOrEnvironment(
                serverPublicKeyFile: curveServerKeyFile,
                clientSecretKeyFile: curveClientKeyFile
            )
        } catch {
            throw ValidationError("CURVE: \(error.message)")
        }
        let client = try ReceiptsClient(configuration, logger: logger)
        let prefix =
            namespace.isEmpty ? "w" + String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16) : namespace
        let gateway = Gateway(client: client, namespace: prefix + ".", backend: .demo(), logger: logger)
        try await gateway.seed()

        let page = try StaticPage.load()
        let router = Router(context: BasicWebSocketRequestContext.self)
        page.register(on: router)
        router.ws(
            "/ws",
            shouldUpgrade: { request, _ in
                // Only this page may open a session: a browser sends the Origin of the page that
                // opens a WebSocket, and another site must not act as a demo user.
                Self.isSameOrigin(request) ? .upgrade([:]) : .dontUpgrade
            },
            onUpgrade: { inbound, outbound, _ in
                await gateway.serve(inbound: inbound, outbound: outbound)
            }
        )
        let address = HostAndPort(http)!
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router),
            configuration: .init(address: .hostname(address.host, port: address.port)),
            logger: logger
        )
        logger.info("serving the demo chat", metadata: ["http": "http://\(http)/", "namespace": "\(prefix)"])
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await gateway.followUpdates() }
            group.addTask { try await app.runService() }
            // The server returns on SIGINT/SIGTERM; the update followers then stop with it.
            _ = try await group.next()
            group.cancelAll()
        }
        await client.shutdown()
    }

    /// Whether a WebSocket request comes from a page this server served: its `Origin` names the
    /// same host and port as its `Host` (the request's authority).
    static func isSameOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers[.origin], let host = request.head.authority else { return false }
        return origin == "http://\(host)" || origin == "https://\(host)"
    }
}

/// `host:port` as given to `--http`.
struct HostAndPort {
    var host: String
    var port: Int

    init?(_ text: String) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else {
            return nil
        }
        host = String(text[..<colon])
        self.port = port
    }
}
