import Foundation
import ZeroMQ

/// The transport's receive-only limit: the same frames over PUSH/PULL on the same kind of endpoint
/// (ipc://) into a separate process that only unpacks them with protobuf-c
/// (`receipts__v1__event_batch__unpack` from CReceiptsProto, no conversion to Swift values,
/// no engine, no log, no replies, no updates). `WireLimitBaseline` adds what receiptd must send.
///
/// Measures the transport: PUSH → PULL has no protocol for ReceiptsClient to speak.
enum RawTransportBaseline {
    /// Events per second through PUSH → PULL + unpack, from the first send to the sink's last unpack.
    static func measure(_ set: FrameSet, context: ZMQContext) throws -> Double {
        let sink = try SinkProcess(prefix: "rr") {
            ["sink", "--endpoint", $0.endpoint("raw"), "--events", "\(set.eventCount)"]
        }
        let socket = try ZMQSocket(context: context, type: .push)
        defer { socket.close() }
        try socket.setSendHighWaterMark(0)
        try socket.setLinger(milliseconds: 5000)
        try socket.connect(sink.endpoint("raw"))
        let start = Monotonic.now()
        for frame in set.frames {
            _ = try socket.send([frame.bytes])
        }
        _ = try sink.expectLine(startingWith: "done ")
        let end = Monotonic.now()
        return Double(set.eventCount) / Monotonic.seconds(from: start, to: end)
    }
}
