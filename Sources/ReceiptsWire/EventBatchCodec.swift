import CReceiptsProto
public import ReceiptsCore

/// Ingest frames (`receipts.v1.EventBatch`) to and from events.
public enum EventBatchCodec {
    /// What ``decode(_:invalidUTF8:maxIDBytes:)-(UnsafeRawBufferPointer,_,_)`` does with a string field whose
    /// bytes are not UTF-8 or hold a NUL (protobuf-c checks neither, so a C gateway can send
    /// any bytes, and a Go or Python one NULs, which are valid UTF-8).
    public enum InvalidUTF8: Sendable {
        /// Refuse the frame, naming the event and the field: frames from gateways, so that two
        /// different ids never become one.
        case refuse
        /// Read the string as receiptd did before it refused such ids: bad bytes replaced with
        /// U+FFFD, the string ended at its first NUL. Only for frames a log took before then,
        /// so that replaying them reaches the state they made.
        case repair
    }

    /// Decodes an ingest frame into its events, in order.
    ///
    /// The frame is not trusted: anything protobuf-c cannot parse throws, and so does an id
    /// that is not UTF-8 or holds a NUL (unless repairing). An event with no kind set (or one
    /// this build does not know) decodes to `EventKind.unknown`, and a conversation kind that is
    /// neither direct nor group to `EventKind.invalid`, which the engine rejects on their own
    /// while the rest of the batch proceeds. An empty frame is a valid empty batch. There is no
    /// size limit here; the caller checks frame size first.
    /// - Parameters:
    ///   - frame: The frame body; only read during the call.
    ///   - invalidUTF8: Refuse (the default) or repair string fields that are not UTF-8 or hold a NUL.
    ///   - maxIDBytes: UTF-8 bytes an id may have; a longer one throws `.idTooLong` naming the
    ///     event, the field, its length and the limit (a gateway limit).
    /// - Returns: The batch's events.
    /// - Throws: `WireError` with code `.malformedFrame` when the bytes are not an `EventBatch`,
    ///   `.invalidField` naming the event and the field (`event 2: conversation_id is not valid
    ///   UTF-8`, `event 2: conversation_id holds a NUL byte`) when refusing such a string.
    public static func decode(
        _ frame: UnsafeRawBufferPointer,
        invalidUTF8: InvalidUTF8 = .refuse,
        maxIDBytes: Int = .max
    ) throws(WireError) -> [Event] {
        try ProtobufC.unpack(
            frame,
            as: "EventBatch",
            unpack: receipts__v1__event_batch__unpack
        ) { (batch) throws(WireError) in
            var index = 0
            return try [Event](wire: batch.events, count: batch.n_events) { (event) throws(WireError) in
                defer { index += 1 }
                return try Event(
                    wire: event,
                    strings: RequestStrings(request: .event(index), invalidUTF8: invalidUTF8, maxBytes: maxIDBytes)
                )
            }
        }
    }

    /// Decodes an ingest frame into its events; see ``decode(_:invalidUTF8:maxIDBytes:)-(UnsafeRawBufferPointer,_,_)``.
    public static func decode(
        _ frame: [UInt8],
        invalidUTF8: InvalidUTF8 = .refuse,
        maxIDBytes: Int = .max
    ) throws(WireError) -> [Event] {
        try ProtobufC.withBytes(frame) { (bytes) throws(WireError) in
            try decode(bytes, invalidUTF8: invalidUTF8, maxIDBytes: maxIDBytes)
        }
    }

    /// Encodes events as an ingest frame, for gateways, load generators and tests.
    ///
    /// A nil client time, a `Read` of the whole conversation (nil message) and `.unknown`
    /// encode as the proto3 defaults (0, "", no kind) and decode back to the same values;
    /// `.invalid` (decoded, never sent) encodes as no kind too.
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
