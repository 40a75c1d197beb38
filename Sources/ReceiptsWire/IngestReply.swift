import CReceiptsProto
public import ReceiptsCore

/// The reply to an acknowledged ingest frame (`receipts.v1.IngestReply`).
public struct IngestReply: Hashable, Sendable {
    /// One outcome per event, in batch order; empty when the frame was refused.
    public var results: [EventOutcome]
    /// Set when the whole frame was refused (undecodable, oversized, wrong frame count).
    public var error: ErrorReply?

    /// Creates a reply.
    /// - Parameters:
    ///   - results: One outcome per event, in batch order.
    ///   - error: Why the whole frame was refused, if it was.
    public init(results: [EventOutcome], error: ErrorReply? = nil) {
        self.results = results
        self.error = error
    }

    /// The reply as a frame body.
    public func encode() -> [UInt8] {
        var arena = Arena(expectedBytes: 64 + results.count * 64)
        var reply = Receipts__V1__IngestReply()
        receipts__v1__ingest_reply__init(&reply)
        (reply.n_results, reply.results) = arena.messages(results) { outcome, arena in outcome.build(in: &arena) }
        reply.error = error?.build(in: &arena)
        return ProtobufC.pack(
            &reply,
            size: receipts__v1__ingest_reply__get_packed_size,
            pack: receipts__v1__ingest_reply__pack
        )
    }

    /// Decodes a reply frame (gateways, `receiptctl`, tests).
    /// - Throws: `WireError` `.malformedFrame` for bytes that are not an `IngestReply`,
    ///   `.invalidField` for an outcome number this build does not know.
    public static func decode(_ frame: UnsafeRawBufferPointer) throws(WireError) -> IngestReply {
        try ProtobufC.unpack(
            frame,
            as: "IngestReply",
            unpack: receipts__v1__ingest_reply__unpack,
            free: receipts__v1__ingest_reply__free_unpacked
        ) { (reply) throws(WireError) in
            IngestReply(
                results: try [EventOutcome](wire: reply.results, count: reply.n_results) { (result) throws(WireError) in
                    try EventOutcome(wire: result)
                },
                error: reply.error.map { ErrorReply(wire: $0.pointee) }
            )
        }
    }

    /// Decodes a reply frame; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ frame: [UInt8]) throws(WireError) -> IngestReply {
        try ProtobufC.withBytes(frame) { (bytes) throws(WireError) in try decode(bytes) }
    }
}
