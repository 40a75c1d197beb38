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
    ///
    /// One per acknowledged frame: the structs, strings and packed bytes share one arena
    /// (the stack block for a few results, one heap block for a big batch).
    public func encode() -> [UInt8] {
        Arena.with(expectedBytes: 256 + results.count * 128) { arena in
            var reply = Receipts__V1__IngestReply()
            receipts__v1__ingest_reply__init(&reply)
            (reply.n_results, reply.results) = arena.messages(results) { outcome, arena in outcome.build(in: &arena) }
            reply.error = error?.build(in: &arena)
            return ProtobufC.pack(
                &reply,
                fields: ProtobufC.fields(receipts__v1__ingest_reply__descriptor)
                    + results.count * (1 + ProtobufC.fields(receipts__v1__event_result__descriptor))
                    + ProtobufC.fields(receipts__v1__error_reply__descriptor),
                arena: &arena,
                pack: receipts__v1__ingest_reply__pack
            )
        }
    }

    /// Decodes a reply frame (gateways, `receiptctl`, tests).
    /// - Throws: `WireError` `.malformedFrame` for bytes that are not an `IngestReply`,
    ///   `.invalidField` for an outcome number this build does not know.
    public static func decode(_ frame: UnsafeRawBufferPointer) throws(WireError) -> IngestReply {
        try ProtobufC.unpack(
            frame,
            as: "IngestReply",
            unpack: receipts__v1__ingest_reply__unpack
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
