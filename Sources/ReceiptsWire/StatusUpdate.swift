import CReceiptsProto
public import ReceiptsCore

/// A published change of a message's status (`receipts.v1.StatusUpdate`, the second frame
/// of a PUB message); the conversation is `status.conversation`.
public struct StatusUpdate: Hashable, Sendable {
    /// The publishing worker's run (the wire's `epoch`): a new one means "fetch a snapshot".
    public var publisherRun: UInt64
    /// Per conversation within a publisher run: 1, 2, 3, ...; a gap means updates were lost.
    public var sequence: UInt64
    /// The message's status now.
    public var status: MessageStatus

    /// Creates an update.
    /// - Parameters:
    ///   - publisherRun: The publishing worker's run.
    ///   - sequence: The conversation's update sequence within the run.
    ///   - status: The message's status now.
    public init(publisherRun: UInt64, sequence: UInt64, status: MessageStatus) {
        self.publisherRun = publisherRun
        self.sequence = sequence
        self.status = status
    }

    /// The update as a frame body; published updates have no viewer, so no display text.
    ///
    /// The daemon encodes one per published change, so this is built to stay off the heap
    /// but for the returned array: the C structs, strings and packed bytes live in the
    /// arena's stack block (unless the ids are very long).
    public func encode() -> [UInt8] {
        // About 600 bytes for ids of a few bytes; long ids get heap blocks as they need them.
        Arena.with(expectedBytes: 0) { arena in
            var update = Receipts__V1__StatusUpdate()
            receipts__v1__status_update__init(&update)
            update.conversation_id = arena.cString(status.conversation)
            update.epoch = publisherRun
            update.sequence = sequence
            update.status = status.build(displayText: "", in: &arena)
            return ProtobufC.pack(
                &update,
                fields: ProtobufC.fields(receipts__v1__status_update__descriptor)
                    + ProtobufC.fields(receipts__v1__message_status__descriptor),
                arena: &arena,
                pack: receipts__v1__status_update__pack
            )
        }
    }

    /// Decodes an update frame (subscribers, tests).
    ///
    /// The conversation is taken from the status; a peer that left the status's own
    /// conversation empty still gets the update's.
    /// - Throws: `WireError` `.malformedFrame` for bytes that are not a `StatusUpdate`.
    public static func decode(_ frame: UnsafeRawBufferPointer) throws(WireError) -> StatusUpdate {
        try ProtobufC.unpack(
            frame,
            as: "StatusUpdate",
            unpack: receipts__v1__status_update__unpack
        ) { (update) throws(WireError) in
            var status = MessageStatus(wire: update.status?.pointee)
            if status.conversation.isEmpty {
                status.conversation = String(wire: update.conversation_id)
            }
            return StatusUpdate(publisherRun: update.epoch, sequence: update.sequence, status: status)
        }
    }

    /// Decodes an update frame; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ frame: [UInt8]) throws(WireError) -> StatusUpdate {
        try ProtobufC.withBytes(frame) { (bytes) throws(WireError) in try decode(bytes) }
    }
}
