import Foundation
import ZeroMQ

/// The transport's limit: the same frames over PUSH/PULL on the same kind of endpoint
/// (ipc://) into a separate process that only unpacks them with protobuf-c
/// (`receipts__v1__event_batch__unpack` from CReceiptsProto, no conversion to Swift values,
/// no engine, no log, no replies, no updates).
///
/// Measures the transport itself: PUSH → PULL has no protocol for ReceiptsClient to speak.
enum RawTransportBaseline {
    /// Events per second through PUSH → PULL + unpack, from the first send to the sink's last unpack.
    static func measure(_ set: FrameSet, context: ZMQContext) throws -> Double {
        let directory = try DaemonProcess.makeTemporaryDirectory(prefix: "rr")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let endpoint = "ipc://\(directory)/raw.sock"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = ["sink", "--endpoint", endpoint, "--events", "\(set.eventCount)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        let lines = LineReader(output.fileHandleForReading)
        guard lines.next() == "ready" else { throw LoadgenError(.process, "raw sink did not start") }
        let socket = try ZMQSocket(context: context, type: .push)
        defer { socket.close() }
        try socket.setSendHighWaterMark(0)
        try socket.setLinger(milliseconds: 5000)
        try socket.connect(endpoint)
        let start = Monotonic.now()
        for frame in set.frames {
            _ = try socket.send([frame.bytes])
        }
        guard let done = lines.next(), done.hasPrefix("done ") else {
            throw LoadgenError(.process, "raw sink did not finish")
        }
        let end = Monotonic.now()
        return Double(set.eventCount) / Monotonic.seconds(from: start, to: end)
    }
}
