import Glibc

/// A plain HTTP/1.0 request on a loopback port over a socket of its own, for probing etcd's
/// `/health` and receiptd's `/metrics` from the tests and the load generator, and for the tests'
/// calls of etcd's JSON gateway.
///
/// Not Foundation's `URLSession`: on Linux it stops the process with a fatal error ("Transfer
/// completed, but there's no response") when a server closes a connection without answering,
/// which a starting etcd does.
package enum LoopbackHTTP {
    /// A response: the status code and the body as text.
    package struct Response: Sendable {
        package var status: Int
        package var body: String
    }

    /// GETs `path` from `127.0.0.1:port`, waiting at most `timeoutMilliseconds` for each step.
    ///
    /// - Returns: The response, or nil when nothing listens, the connection closes without an
    ///   answer, or the answer is not HTTP.
    package static func get(port: Int, path: String, timeoutMilliseconds: Int = 1000) -> Response? {
        request("GET \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", port: port, timeoutMilliseconds)
    }

    /// POSTs `body` (JSON) to `path` on `127.0.0.1:port`, waiting at most `timeoutMilliseconds`
    /// for each step.
    ///
    /// - Returns: The response, or nil as for `get(port:path:timeoutMilliseconds:)`.
    package static func post(port: Int, path: String, body: String, timeoutMilliseconds: Int = 3000) -> Response? {
        request(
            "POST \(path) HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)",
            port: port,
            timeoutMilliseconds
        )
    }

    private static func request(_ text: String, port: Int, _ timeoutMilliseconds: Int) -> Response? {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        let size = socklen_t(MemoryLayout<timeval>.size)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, size)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, size)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else { return nil }
        let request = Array(text.utf8)
        guard
            request.withUnsafeBytes({ send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) })
                == request.count
        else { return nil }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            guard count > 0 else {
                if count < 0 { return nil }
                break
            }
            received += buffer[..<count]
        }
        let text = String(decoding: received, as: UTF8.self)
        guard let headerEnd = text.range(of: "\r\n\r\n") else { return nil }
        let statusLine = text[..<headerEnd.lowerBound].prefix { $0 != "\r" }.split(separator: " ")
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/"), let status = Int(statusLine[1]) else {
            return nil
        }
        return Response(status: status, body: String(text[headerEnd.upperBound...]))
    }
}
