import Foundation
import ReceiptsCore
import ReceiptsService
import ReceiptsWire
import ZeroMQ

/// The receiving half of the wire-limit baseline (`sink --publish`), run as its own process
/// like receiptd: what receiptd must do on its sockets for every frame and nothing else.
///
/// A ROUTER (receiptd's ingest socket, `ROUTER_MANDATORY`) and a PUB (receiptd's high-water
/// mark); per frame: decode it with `EventBatchCodec` (protobuf-c, as receiptd), publish one
/// status update per event through receiptd's own `StatusPublisher` (topic frame + encoded
/// `StatusUpdate`), and reply with an encoded `IngestReply` of one result per event through
/// receiptd's `RequestEnvelope`. No engine, no log, no fsync.
///
/// Measures the transport: the gateways' DEALERs (`LoadDriver`) drive it exactly as they drive receiptd.
enum WireSink {
    /// Binds both sockets, says "ready" on standard output, and serves until killed.
    /// - Parameters:
    ///   - ingest: The ROUTER's endpoint.
    ///   - publish: The PUB's endpoint.
    /// - Throws: `ZMQError` from a socket, `LoadgenError` for a frame that is not an `EventBatch`.
    static func serve(context: ZMQContext, ingest: String, publish: String) throws {
        let router = try ZMQSocket(context: context, type: .router)
        defer { router.close() }
        let publisher = try ZMQSocket(context: context, type: .pub)
        defer { publisher.close() }
        try router.setRouterMandatory(true)
        try publisher.setSendHighWaterMark(ServiceConfiguration().publishHighWaterMark)
        try router.bind(ingest)
        try publisher.bind(publish)
        let updates = StatusPublisher(sink: publisher, windowMilliseconds: 0, publisherRun: 1, onPublished: { _ in })
        // receiptd's engine numbers conversations as it meets them, and the publisher finds each
        // one's stream by that number: so does the sink, at the cost of the engine's lookup.
        var conversations: [String: UInt64] = [:]
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        while true {
            let reply = try router.receiveMultipart { frames -> [[UInt8]]? in
                guard let (envelope, body) = RequestEnvelope.split(frames), body.count == 1, let frame = body.first,
                    let events = try? EventBatchCodec.decode(frame)
                else { return nil }
                let now = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
                let statuses = events.map { MessageStatus(standingInFor: $0, at: now) }
                let keys = statuses.map { status in
                    if let index = conversations[status.conversation] { return index << 32 | status.sequence }
                    let index = UInt64(conversations.count)
                    conversations[status.conversation] = index
                    return index << 32 | status.sequence
                }
                updates.submit(statuses, keys: keys, now: 0)
                let results = [EventOutcome](repeating: .accepted(held: false), count: events.count)
                return envelope.reply(IngestReply(results: results).encode())
            }
            guard let reply, let reply else { throw LoadgenError(.protocolViolation, "undecodable ingest frame") }
            _ = try router.send(reply, dontWait: true)
        }
    }
}
