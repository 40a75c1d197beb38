import Foundation
import ZeroMQ

/// The wire limit: what receiptd must do on its sockets, and nothing else, on the same frames,
/// driven by the same gateways (`LoadDriver`'s DEALERs, the same window) into a separate
/// process (`sink --publish`, `WireSink`): decode each frame (`EventBatchCodec`, protobuf-c), publish one status
/// update per event on a PUB (topic + encoded `StatusUpdate`, receiptd's `StatusPublisher`),
/// reply to each frame with an `IngestReply` of one result per event through the ROUTER.
/// No engine, no log, no fsync.
///
/// Where `RawTransportBaseline` only receives, this one also pays for the bytes receiptd sends,
/// so receiptd's ratio to it is the share of the wire's capacity its engine and log leave.
///
/// Measures the transport: raw frames on DEALERs, as encoded, as receiptd's own rows are driven.
enum WireLimitBaseline {
    /// Events per second through DEALER → ROUTER + decode + updates + replies, timed as receiptd's
    /// acknowledged rows are (first send to last reply).
    /// - Parameters:
    ///   - set: The frames (setup frames are answered too, untimed).
    ///   - options: Acknowledged options (window, rate) as given to receiptd's row.
    ///   - shape: The workload (gateway count).
    /// - Throws: `LoadgenError` if the receiver does not start or answers other than one
    ///   accepted result per event.
    static func measure(
        _ set: FrameSet,
        _ options: DriveOptions,
        shape: WorkloadShape,
        context: ZMQContext
    ) throws -> Double {
        precondition(options.acknowledged, "the wire-limit receiver serves acknowledged ingest only")
        let sink = try SinkProcess(prefix: "rw") {
            ["sink", "--endpoint", $0.endpoint("ingest"), "--publish", $0.endpoint("publish")]
        }
        let driver = LoadDriver(
            context: context,
            ingestEndpoint: sink.endpoint("ingest"),
            publishEndpoint: sink.endpoint("publish")
        )
        // The receiver lives until the drive is over (released, it is killed).
        let result = try withExtendedLifetime(sink) {
            try driver.drive(set, gateways: shape.gateways, conversations: shape.conversations, options: options)
        }
        guard result.accepted == set.eventCount else {
            throw LoadgenError(.protocolViolation, "wire sink accepted \(result.accepted) of \(set.eventCount) events")
        }
        return result.eventsPerSecond
    }
}
