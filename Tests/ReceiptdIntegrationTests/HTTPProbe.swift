import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plain HTTP GETs against a daemon's or Prometheus's loopback endpoint, with a short timeout.
enum HTTPProbe {
    /// A response: the status code and the body as text.
    struct Response {
        var status: Int
        var body: String
    }

    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 5
        return URLSession(configuration: configuration)
    }()

    /// GETs `http://<address><pathAndQuery>`.
    /// - Throws: if the URL is invalid or the request fails (no response within 5 s included).
    static func get(_ address: String, _ pathAndQuery: String) async throws -> Response {
        guard let url = URL(string: "http://\(address)\(pathAndQuery)") else {
            throw IntegrationError("invalid URL http://\(address)\(pathAndQuery)")
        }
        let (data, response) = try await session.data(from: url)
        guard let http = response as? HTTPURLResponse else {
            throw IntegrationError("not an HTTP response from \(url)")
        }
        return Response(status: http.statusCode, body: String(decoding: data, as: UTF8.self))
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
