import Logging
import ZeroMQ

/// CurveZMQ's gatekeeper inside the worker, owned by the service loop's thread.
///
/// It is the ZAP handler (RFC 27) of the loop's context: libzmq asks it about every CURVE
/// handshake on the four endpoints, and it admits a client key only if the allowlist gives it
/// a role for that endpoint (the ZAP domain). The role goes back as the connection's
/// `User-Id`, which the query handler reads. Handshakes that fail before ZAP is asked (a
/// plaintext client, a wrong server key) are seen through the `ConnectionMonitors`, which hand
/// them to `count(_:on:)`. Both kinds of refusal are counted per endpoint and logged with the
/// key's fingerprint, never the key.
final class Authenticator {
    /// Where libzmq sends ZAP requests (RFC 27).
    static let zapEndpoint = "inproc://zeromq.zap.01"
    /// The ZAP `User-Id` property name on received messages.
    static let userIDProperty = "User-Id"

    private let settings: CurveSettings
    private var allowlist: KeyAllowlist
    /// The workers' own public key: the one key the replication endpoint admits.
    private let ownPublicKey: CurveKey
    /// The ZAP handler's socket, to poll.
    let handler: ZMQSocket
    private let counters: ServiceCounters
    private let logger: Logger
    /// A client with a refused key reconnects every 100 ms or so: each attempt is counted, but
    /// logged at most every 10 s per kind of refusal.
    private var refusalsLogged = LogThrottle<String>(intervalMilliseconds: 10_000)

    /// Reads the allowlists and binds the ZAP handler, before any endpoint is bound.
    init(
        context: ZMQContext,
        settings: CurveSettings,
        counters: ServiceCounters,
        logger: Logger
    ) throws(ServiceError) {
        self.settings = settings
        self.counters = counters
        self.logger = logger
        do {
            ownPublicKey = try settings.secretKey.publicKey()
        } catch {
            throw ServiceError(.configuration, "the workers' secret key has no public key", cause: error)
        }
        allowlist = try KeyAllowlist.load(files: settings.allowlistFiles)
        do {
            handler = try ZMQSocket(context: context, type: .rep)
            try handler.bind(Self.zapEndpoint)
        } catch {
            throw ServiceError(.transport, "cannot bind the ZAP handler", cause: error)
        }
        logger.info("CURVE on every endpoint", metadata: Self.metadata(allowlist))
    }

    /// Makes `socket` a CURVE server for `endpoint` (its ZAP domain).
    func secure(_ socket: ZMQSocket, as endpoint: ServiceEndpoint) throws(ZMQError) {
        try socket.setCurveServer(secretKey: settings.secretKey, zapDomain: endpoint.rawValue)
    }

    /// Answers every queued ZAP request, without waiting.
    func drain() throws(ZMQError) {
        while let request = try handler.receiveMultipart(dontWait: true) {
            _ = try handler.send(answer(request))
        }
    }

    /// Re-reads the allowlist files; on any error the previous lists stay in force. Connections
    /// already admitted stay open: ZAP is asked only at the handshake.
    func reload() {
        do {
            allowlist = try KeyAllowlist.load(files: settings.allowlistFiles)
            counters.increment(.keyReloads)
            logger.notice("client keys reloaded", metadata: Self.metadata(allowlist))
        } catch {
            counters.increment(.keyReloadsFailed)
            logger.error(
                "client keys not reloaded; the previous lists stay in force",
                metadata: ["error": "\(error)"]
            )
        }
    }

    func close() {
        handler.close()
    }

    // MARK: - ZAP

    /// The reply to one ZAP request: version, request id, status code, status text, user id, metadata.
    private func answer(_ request: [[UInt8]]) -> [[UInt8]] {
        func reply(_ status: String, _ text: String, user: String = "") -> [[UInt8]] {
            let requestID = request.count > 1 ? request[1] : []
            return [Array("1.0".utf8), requestID, Array(status.utf8), Array(text.utf8), Array(user.utf8), []]
        }
        // version, request id, domain, address, routing id, mechanism, credentials...
        guard request.count >= 6, request[0] == Array("1.0".utf8) else {
            logger.error("malformed ZAP request", metadata: ["zap.frames": "\(request.count)"])
            return reply("500", "malformed ZAP request")
        }
        let domain = String(decoding: request[2], as: UTF8.self)
        let address = String(decoding: request[3], as: UTF8.self)
        let mechanism = String(decoding: request[5], as: UTF8.self)
        guard let endpoint = ServiceEndpoint(rawValue: domain) else {
            return reply("400", "unknown ZAP domain")
        }
        /// Counts and logs (at most every 10 s per `kind`) a refusal, and answers it.
        func refuse(_ why: Logger.Message, kind: String, _ detail: Logger.Metadata, reply text: String) -> [[UInt8]] {
            counters.increment(.authRefused, label: endpoint.rawValue)
            if refusalsLogged.admit("\(endpoint.rawValue) \(kind)") != nil {
                logger.warning(
                    why,
                    metadata: detail.merging(["endpoint": "\(endpoint.rawValue)", "peer": "\(address)"]) { $1 }
                )
            }
            return reply("400", text)
        }
        guard mechanism == "CURVE", request.count == 7, let key = try? CurveKey(bytes: request[6]) else {
            return refuse(
                "handshake refused: not a CURVE client",
                kind: mechanism,
                ["mechanism": "\(mechanism)"],
                reply: "CURVE required"
            )
        }
        if endpoint == .replication {
            // Members follow each other with the workers' own key pair (the Secret they share).
            guard key == ownPublicKey else {
                return refuse(
                    "handshake refused: only the workers' own key may replicate",
                    kind: key.fingerprint,
                    ["key": "\(key.fingerprint)"],
                    reply: "key not allowed on replication"
                )
            }
            return reply("200", "OK", user: "replica")
        }
        guard let role = allowlist.role(of: key, on: endpoint) else {
            return refuse(
                "handshake refused: key not allowed on this endpoint",
                kind: key.fingerprint,
                ["key": "\(key.fingerprint)"],
                reply: "key not allowed on \(endpoint.rawValue)"
            )
        }
        logger.debug(
            "client admitted",
            metadata: ["endpoint": "\(endpoint.rawValue)", "key": "\(key.fingerprint)", "role": "\(role.rawValue)"]
        )
        return reply("200", "OK", user: role.rawValue)
    }

    // MARK: - Monitors

    /// Counts and logs a failed handshake that a socket monitor reported.
    func count(_ event: MonitorEvent, on endpoint: ServiceEndpoint) {
        // A ZAP refusal was counted and logged, with its key, when it was answered.
        guard event.event != .handshakeFailedAuth else { return }
        counters.increment(.authHandshakeFailures, label: endpoint.rawValue)
        let reason =
            switch (event.event, event.value) {
            case (.handshakeFailedProtocol, MonitorEvent.mechanismMismatch):
                "the client does not use CURVE"
            case (.handshakeFailedProtocol, MonitorEvent.cryptographicError):
                "cryptographic failure (the client has another server key)"
            case (.handshakeFailedProtocol, let code): "protocol error 0x\(String(code, radix: 16))"
            default: "the handshake did not complete"
            }
        if refusalsLogged.admit("\(endpoint.rawValue) \(reason)") != nil {
            logger.warning(
                "handshake failed",
                metadata: ["endpoint": "\(endpoint.rawValue)", "address": "\(event.address)", "reason": "\(reason)"]
            )
        }
    }

    private static func metadata(_ allowlist: KeyAllowlist) -> Logger.Metadata {
        let counts = allowlist.counts
        return Dictionary(
            uniqueKeysWithValues: ClientRole.allCases.map { ("keys.\($0.rawValue)", "\(counts[$0] ?? 0)") }
        )
    }
}
