import Foundation
import ZeroMQ

/// UTF-8 bytes of a string, for building frames in tests.
func bytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// How long any test receive may wait before it counts as a failure (never reached when passing).
let testReceiveTimeout: Int32 = 5_000

/// The transports tests run over: all local, never beyond 127.0.0.1.
enum Transport: CaseIterable, CustomStringConvertible, Sendable {
    case inproc
    case ipc
    case tcp

    var description: String {
        switch self {
        case .inproc: "inproc"
        case .ipc: "ipc"
        case .tcp: "tcp"
        }
    }
}

/// A fresh directory under the system temporary directory, for `ipc://` endpoints; removed on deinit.
final class TemporaryDirectory {
    let path: String

    init() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("zmq-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        path = url.path
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }
}

/// Binds `socket` on a fresh endpoint of `transport` and returns the endpoint to connect to.
func bindFresh(_ socket: ZMQSocket, _ transport: Transport, in directory: TemporaryDirectory) throws -> String {
    switch transport {
    case .inproc:
        let endpoint = "inproc://test-\(UUID().uuidString)"
        try socket.bind(endpoint)
        return endpoint
    case .ipc:
        let endpoint = "ipc://\(directory.path)/\(UUID().uuidString.prefix(8)).ipc"
        try socket.bind(endpoint)
        return endpoint
    case .tcp:
        try socket.bind("tcp://127.0.0.1:*")
        return try socket.lastEndpoint
    }
}

/// A socket with a receive timeout, so a failing test ends instead of hanging.
func makeSocket(_ context: ZMQContext, _ type: SocketType) throws -> ZMQSocket {
    let socket = try ZMQSocket(context: context, type: type)
    try socket.setReceiveTimeout(milliseconds: testReceiveTimeout)
    return socket
}
