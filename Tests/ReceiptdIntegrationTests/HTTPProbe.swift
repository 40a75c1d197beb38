import Foundation
import ReceiptsTestKit

/// Plain HTTP GETs against a daemon's or Prometheus's loopback endpoint, with a short timeout.
enum HTTPProbe {
    /// A response: the status code and the body as text.
    struct Response {
        var status: Int
        var body: String
    }

    /// GETs `http://<address><pathAndQuery>` (a loopback `host:port`), through the kit's
    /// `LoopbackHTTP` (never `URLSession`, which can stop the test process on a connection closed
    /// without an answer).
    /// - Throws: if the address has no port or no answer comes within 5 s.
    static func get(_ address: String, _ pathAndQuery: String) async throws -> Response {
        guard let port = address.split(separator: ":").last.flatMap({ Int($0) }) else {
            throw IntegrationError("no port in \(address)")
        }
        guard let response = LoopbackHTTP.get(port: port, path: pathAndQuery, timeoutMilliseconds: 5000) else {
            throw IntegrationError("no HTTP answer from \(address)\(pathAndQuery)")
        }
        return Response(status: response.status, body: response.body)
    }

    /// The path of `name` on `PATH`.
    /// - Throws: if it is not installed (`deploy/install-deps.sh` installs it), so that no test
    ///   silently skips what it was written to check.
    static func requireBinary(_ name: String) throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":")
        where FileManager.default.isExecutableFile(atPath: "\(directory)/\(name)") {
            return "\(directory)/\(name)"
        }
        throw IntegrationError("\(name) is not installed; run deploy/install-deps.sh (Debian package prometheus)")
    }
}
