import CReceiptsProto
public import ReceiptsCore

/// Ingest frames (`receipts.v1.EventBatch`) to and from events.
public enum EventBatchCodec {
    /// Decodes an ingest frame into its events, in order.
    ///
    /// The frame is not trusted: anything protobuf-c cannot parse throws; an event with no
    /// kind set (or one this build does not know) decodes to `EventKind.unknown`, which the
    /// engine rejects on its own while the rest of the batch proceeds. An empty frame is a
    /// valid empty batch. There is no size limit here; the caller checks frame size first.
    /// - Parameter frame: The frame body; only read during the call.
    /// - Returns: The batch's events.
    /// - Throws: `WireError` with code `.malformedFrame` when the bytes are not an `EventBatch`.
    public static func decode(_ frame: UnsafeRawBufferPointer) throws(WireError) -> [Event] {
        try ProtobufC.unpack(
            frame,
            as: "EventBatch",
            unpack: receipts__v1__event_batch__unpack
        ) { batch in
            [Event](wire: batch.events, count: batch.n_events) { Event(wire: $0) }
        }
    }

    /// Decodes an ingest frame into its events; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ frame: [UInt8]) throws(WireError) -> [Event] {
        try ProtobufC.withBytes(frame) { (bytes) throws(WireError) in try decode(bytes) }
    }

    /// Encodes events as an ingest frame, for gateways, load generators and tests.
    ///
    /// A nil client time, a `Read` of the whole conversation (nil message) and `.unknown`
    /// encode as the proto3 defaults (0, "", no kind) and decode back to the same values.
    public static func encode(_ events: [Event]) -> [UInt8] {
        Arena.with(expectedBytes: 64 + events.count * 256) { arena in
            var batch = Receipts__V1__EventBatch()
            receipts__v1__event_batch__init(&batch)
            if !events.isEmpty {
                let structs = arena.make(Receipts__V1__Event.self, count: events.count)
                let pointers = arena.make(UnsafeMutablePointer<Receipts__V1__Event>?.self, count: events.count)
                for (index, event) in events.enumerated() {
                    event.build(into: structs + index, arena: &arena)
                    (pointers + index).initialize(to: structs + index)
                }
                batch.n_events = events.count
                batch.events = pointers
            }
            return ProtobufC.pack(
                &batch,
                size: receipts__v1__event_batch__get_packed_size,
                pack: receipts__v1__event_batch__pack
            )
        }
    }
}
