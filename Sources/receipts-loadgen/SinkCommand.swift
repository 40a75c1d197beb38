import ArgumentParser
import CReceiptsProto
import Foundation
import ZeroMQ

/// The receiving half of the transport baselines, run as its own process like receiptd: by
/// default (`RawTransportBaseline`) a PULL socket that unpacks every frame with protobuf-c and
/// does nothing else; with `--publish` (`WireLimitBaseline`) the wire limit, `WireSink`.
///
/// Measures the transport: the baselines' receiver, with no protocol for ReceiptsClient to speak.
struct SinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sink",
        abstract: "Baseline receiver: PULL + protobuf-c unpack, or with --publish the wire limit (started by bench).",
        shouldDisplay: false
    )

    @Option(help: "Endpoint to bind the PULL socket (with --publish: the ROUTER) to.")
    var endpoint: String

    @Option(help: "Events to receive before reporting (receive-only; with --publish it serves until killed).")
    var events = 0

    @Option(help: "Wire limit: bind a ROUTER, reply per frame, publish one update per event on this PUB endpoint.")
    var publish: String?

    func run() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        if let publish {
            try WireSink.serve(context: context, ingest: endpoint, publish: publish)
            return
        }
        let socket = try ZMQSocket(context: context, type: .pull)
        defer { socket.close() }
        try socket.setReceiveHighWaterMark(0)
        try socket.bind(endpoint)
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var received = 0
        var first: UInt64 = 0
        while received < events {
            let count = try socket.receiveMultipart { frames -> Int in
                guard let frame = frames.last, let base = frame.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    let batch = receipts__v1__event_batch__unpack(nil, frame.count, base)
                else { return -1 }
                defer { receipts__v1__event_batch__free_unpacked(batch, nil) }
                return batch.pointee.n_events
            }
            guard let count, count >= 0 else { throw LoadgenError(.protocolViolation, "undecodable frame") }
            if first == 0 { first = Monotonic.now() }
            received += count
        }
        FileHandle.standardOutput.write(Data("done \(received) \(Monotonic.now() - first)\n".utf8))
    }
}
