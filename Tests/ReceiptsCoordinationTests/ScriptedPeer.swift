import Foundation
import Glibc
import Synchronization

/// A TCP listener on 127.0.0.1 that plays etcd's gateway badly or well: each connection's request
/// (head and body, by its Content-Length) is recorded, then the next scripted answer is written
/// as raw bytes, and the connection is held open or closed as the answer says.
final class ScriptedPeer: Sendable {
    /// What the peer does with one request.
    enum Answer: Sendable {
        /// Writes these bytes, then closes.
        case reply([UInt8])
        /// Writes these bytes, then holds the connection until the client closes it.
        case replyAndHold([UInt8])
    }

    /// A request as received.
    struct Request: Sendable {
        var head: String
        var body: [UInt8]
    }

    let port: Int
    private let listener: Int32
    private let answers: Mutex<[Answer]>
    private let received = Mutex<[Request]>([])
    /// Connections the client closed while the peer held them.
    private let closedByClient = Atomic<Int>(0)

    var endpoint: String { "http://127.0.0.1:\(port)" }
    var requests: [Request] { received.withLock { $0 } }
    var connectionsClosedByClient: Int { closedByClient.load(ordering: .relaxed) }

    /// A peer with these answers, in order; one that does not listen holds its port and refuses
    /// every connection.
    init(_ answers: [Answer], listens: Bool = true) throws {
        self.answers = Mutex(answers)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && (!listens || listen(listener, 16) == 0)
                    && getsockname(listener, address, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRNOTAVAIL) }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        if listens { Thread { [self] in acceptLoop() }.start() }
    }

    /// Stops accepting; connections held stay held until their clients close them.
    func close() {
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            Thread { [self] in serve(connection) }.start()
        }
    }

    private func serve(_ connection: Int32) {
        defer { Glibc.close(connection) }
        guard let request = Self.readRequest(connection) else { return }
        received.withLock { $0.append(request) }
        guard let answer = answers.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { return }
        switch answer {
        case .reply(let bytes):
            Self.write(connection, bytes)
        case .replyAndHold(let bytes):
            Self.write(connection, bytes)
            var byte: UInt8 = 0
            while recv(connection, &byte, 1, 0) > 0 {}
            closedByClient.add(1, ordering: .relaxed)
        }
    }

    private static func readRequest(_ connection: Int32) -> Request? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
                let length =
                    head.split(separator: "\r\n")
                    .first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                if bytes.count - end.upperBound >= length {
                    return Request(head: head, body: Array(bytes[end.upperBound..<(end.upperBound + length)]))
                }
            }
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            bytes += chunk[..<count]
        }
    }

    private static func write(_ connection: Int32, _ bytes: [UInt8]) {
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard count > 0 else { return }
            sent += count
        }
    }

    /// An HTTP/1.1 answer with a Content-Length.
    static func answer(status: String, _ body: String) -> [UInt8] {
        Array(
            "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                .utf8
        )
    }

    /// The head of a chunked HTTP/1.1 answer, and one chunk of it.
    static let chunkedHead = Array(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".utf8
    )
    static func chunk(_ text: String) -> [UInt8] {
        Array("\(String(text.utf8.count, radix: 16))\r\n\(text)\r\n".utf8)
    }
}
