import Glibc

/// A minimal blocking Redis (RESP2) client over loopback TCP: enough to pipeline commands and
/// read their replies, with nothing between the harness and the socket.
final class RESPConnection {
    /// One reply.
    enum Reply: Equatable {
        case simple(String)
        case error(String)
        case integer(Int)
        case bulk([UInt8]?)
        case array([Reply]?)
    }

    private let fd: Int32
    private var input: [UInt8] = []
    private var inputStart = 0
    private var output: [UInt8] = []

    /// Connects to 127.0.0.1:`port`.
    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoadgenError(.system, "socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw LoadgenError(.system, "cannot connect to redis on port \(port): errno \(errno)")
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(fd) }

    /// Queues a command (sent by `flush`).
    func append(_ arguments: [String]) {
        output.append(UInt8(ascii: "*"))
        output.append(contentsOf: String(arguments.count).utf8)
        output.append(contentsOf: [13, 10])
        for argument in arguments {
            let bytes = argument.utf8
            output.append(UInt8(ascii: "$"))
            output.append(contentsOf: String(bytes.count).utf8)
            output.append(contentsOf: [13, 10])
            output.append(contentsOf: bytes)
            output.append(contentsOf: [13, 10])
        }
    }

    /// Writes every queued command.
    func flush() throws {
        var offset = 0
        while offset < output.count {
            let written = output.withUnsafeBytes { write(fd, $0.baseAddress! + offset, output.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw LoadgenError(.system, "write to redis failed: errno \(errno)")
            }
            offset += written
        }
        output.removeAll(keepingCapacity: true)
    }

    /// Sends one command and reads its reply.
    func command(_ arguments: [String]) throws -> Reply {
        append(arguments)
        try flush()
        return try reply()
    }

    /// Reads the next reply.
    func reply() throws -> Reply {
        let line = try readLine()
        guard let kind = line.first else { throw LoadgenError(.protocolViolation, "empty redis reply line") }
        let rest = String(decoding: line.dropFirst(), as: UTF8.self)
        switch kind {
        case UInt8(ascii: "+"): return .simple(rest)
        case UInt8(ascii: "-"): return .error(rest)
        case UInt8(ascii: ":"): return .integer(Int(rest) ?? 0)
        case UInt8(ascii: "$"):
            guard let length = Int(rest), length >= 0 else { return .bulk(nil) }
            try fill(length + 2)
            let bytes = Array(input[inputStart..<(inputStart + length)])
            inputStart += length + 2
            return .bulk(bytes)
        case UInt8(ascii: "*"):
            guard let count = Int(rest), count >= 0 else { return .array(nil) }
            return .array(try (0..<count).map { _ in try reply() })
        default:
            throw LoadgenError(.protocolViolation, "unexpected redis reply \(String(decoding: line, as: UTF8.self))")
        }
    }

    private func readLine() throws -> ArraySlice<UInt8> {
        while true {
            if let end = input[inputStart...].firstIndex(of: 13), end + 1 < input.count {
                let line = input[inputStart..<end]
                inputStart = end + 2
                return line
            }
            try receive()
        }
    }

    private func fill(_ count: Int) throws {
        while input.count - inputStart < count { try receive() }
    }

    private func receive() throws {
        if inputStart > 0 {
            input.removeSubrange(..<inputStart)
            inputStart = 0
        }
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count < 0, errno == EINTR { return }
        guard count > 0 else { throw LoadgenError(.protocolViolation, "redis closed the connection") }
        input.append(contentsOf: chunk[..<count])
    }
}
