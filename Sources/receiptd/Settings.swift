import ArgumentParser
import ReceiptLog
import ReceiptsService
import ZeroMQ

/// Resolves a setting: the flag if given, else the environment variable, else the default.
struct Settings {
    let environment: [String: String]

    func value(_ flag: String?, _ variable: String, _ fallback: String) -> String {
        flag ?? environment[variable] ?? fallback
    }

    func number<T: LosslessStringConvertible>(_ flag: T?, _ variable: String, _ fallback: T) throws -> T {
        if let flag { return flag }
        guard let text = environment[variable] else { return fallback }
        guard let parsed = T(text) else { throw ValidationError("\(variable)=\(text) is not a valid number") }
        return parsed
    }

    /// CURVE settings from the secret key file and the per-role allowlist files (each a flag,
    /// else its `RECEIPTD_CURVE_*` variable), or nil for plaintext when no secret key is given.
    /// The key is read here, so a bad file stops the start with a message naming it.
    func curve(secretKeyFile: String?, allowlistFiles: [ClientRole: String?]) throws -> CurveSettings? {
        let variables: [ClientRole: String] = [
            .gateway: "RECEIPTD_CURVE_GATEWAY_KEYS",
            .reader: "RECEIPTD_CURVE_READER_KEYS",
            .operator: "RECEIPTD_CURVE_OPERATOR_KEYS",
        ]
        var files: [ClientRole: String] = [:]
        for role in ClientRole.allCases {
            if let file = (allowlistFiles[role] ?? nil) ?? variables[role].flatMap({ environment[$0] }) {
                files[role] = file
            }
        }
        guard let path = secretKeyFile ?? environment["RECEIPTD_CURVE_SECRET_KEY_FILE"] else {
            guard files.isEmpty else {
                throw ValidationError("key lists were given without --curve-secret-key-file: CURVE would be off")
            }
            return nil
        }
        do {
            return CurveSettings(secretKey: try CurveKey.read(file: path), allowlistFiles: files)
        } catch {
            throw ValidationError("CURVE secret key: \(error.message)")
        }
    }

    /// The ordinal of a StatefulSet pod from its HOSTNAME ("receiptd-3" → 3), only when
    /// `RECEIPTD_WORKER_INDEX_FROM_HOSTNAME=1` asks for it (an ordinary host name such as
    /// "debian-12" must not make a single worker think it is worker 12).
    static func podOrdinal(_ environment: [String: String]) throws -> Int? {
        guard environment["RECEIPTD_WORKER_INDEX_FROM_HOSTNAME"] == "1" else { return nil }
        guard let hostname = environment["HOSTNAME"], let dash = hostname.lastIndex(of: "-"),
            let ordinal = Int(hostname[hostname.index(after: dash)...])
        else {
            throw ValidationError(
                "RECEIPTD_WORKER_INDEX_FROM_HOSTNAME=1 but HOSTNAME=\(environment["HOSTNAME"] ?? "") has no -<ordinal> suffix"
            )
        }
        return ordinal
    }

    /// Parses the HTTP listen address: `host:port` or `[ipv6]:port` (port 0 picks a free one),
    /// or `off`.
    /// - Returns: The host (without brackets) and port, or nil for `off`.
    static func httpAddress(_ text: String) throws -> (host: String, port: Int)? {
        if text == "off" { return nil }
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port), colon > text.startIndex
        else {
            throw ValidationError("HTTP address must be host:port or off, got \(text)")
        }
        var host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return (String(host), port)
    }

    /// Parses `always`, `none` or `interval:<ms>`.
    static func fsyncPolicy(_ text: String) throws -> FsyncPolicy {
        switch text {
        case "always": return .always
        case "none": return .none
        default:
            if text.hasPrefix("interval:"), let milliseconds = Int(text.dropFirst("interval:".count)), milliseconds > 0
            {
                return .interval(milliseconds: milliseconds)
            }
            throw ValidationError("fsync policy must be always, none or interval:<ms>, got \(text)")
        }
    }
}
