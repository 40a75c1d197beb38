import Foundation
import Hummingbird
import Logging
import Prometheus
import ReceiptsService
import ReceiptsWire

/// The daemon's HTTP endpoint (Hummingbird): `/metrics` for Prometheus, `/healthz` and
/// `/readyz` for probes (`/readyz` by role for a replicated member, deploy/REPLICATION.md
/// section 2; `/healthz` only says the process is alive).
enum HTTPServer {
    /// Builds the application; it serves once run as a service of the daemon's `ServiceGroup`.
    /// - Parameters:
    ///   - host: The address to bind.
    ///   - port: The port to bind; 0 picks a free one (reported through `readiness`).
    ///   - registry: The Prometheus registry swift-metrics reports to.
    ///   - readiness: What `/readyz` reports, and where the bound address goes.
    ///   - workerIndex: This worker's ordinal, for `/readyz`.
    ///   - workerCount: The worker count the log holds (nil before recovery), for `/readyz`.
    ///   - role: A replicated member's role (nil without an elected role), for `/readyz`.
    ///   - logger: The server's logger.
    static func make(
        host: String,
        port: Int,
        registry: PrometheusCollectorRegistry,
        readiness: Readiness,
        workerIndex: Int,
        workerCount: @escaping @Sendable () -> Int?,
        role: @escaping @Sendable () -> MemberRole? = { nil },
        logger: Logger
    ) -> some ApplicationProtocol {
        let router = Router()
        router.get("healthz") { _, _ in
            json(.ok, #"{"status":"alive"}"#)
        }
        router.get("readyz") { _, _ in
            switch readiness.phase {
            case .ready:
                // A replicated member is ready as a primary or as a standby following one; a
                // waiting member or a candidate answers 503 with its role as the status.
                let role = role()
                if let role, !role.isServing {
                    return json(.serviceUnavailable, #"{"status":"\#(role.rawValue)"}"#)
                }
                let count = workerCount().map(String.init) ?? "null"
                let roleField = role.map { #","role":"\#($0.rawValue)""# } ?? ""
                return json(.ok, #"{"status":"ready","worker":\#(workerIndex),"workers":\#(count)\#(roleField)}"#)
            case .recovering, .stopping, .failed:
                return json(.serviceUnavailable, #"{"status":"\#(readiness.phase.rawValue)"}"#)
            }
        }
        router.get("metrics") { _, _ in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer()))
            )
        }
        return Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "receiptd"),
            onServerRunning: { channel in
                let address = channel.localAddress
                readiness.httpBound("\(address?.ipAddress ?? host):\(address?.port ?? port)")
            },
            logger: logger
        )
    }

    private static func json(_ status: HTTPResponse.Status, _ body: String) -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: body))
        )
    }
}
