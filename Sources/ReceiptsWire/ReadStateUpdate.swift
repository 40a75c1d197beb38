import CReceiptsProto
public import ReceiptsCore

/// A published change of a user's own read state in one conversation
/// (`receipts.v1.ReadStateUpdate`, the second frame of a PUB message whose topic is
/// `Partitioning.userTopic(for:)`).
public struct ReadStateUpdate: Hashable, Sendable {
    /// The publishing worker's run (the wire's `epoch`): a new one means "fetch a snapshot".
    public var publisherRun: UInt64
    /// Per user topic within a publisher run: 1, 2, 3, ...; a gap means updates were lost.
    public var sequence: UInt64
    /// The user and their read state now.
    public var change: ReadStateChange

    /// Creates an update.
    /// - Parameters:
    ///   - publisherRun: The publishing worker's run.
    ///   - sequence: The user topic's update sequence within the run.
    ///   - change: The user and their read state now.
    public init(publisherRun: UInt64, sequence: UInt64, change: ReadStateChange) {
        self.publisherRun = publisherRun
        self.sequence = sequence
        self.change = change
    }

    /// The update as a frame body.
    public func encode() -> [UInt8] {
        Arena.with(expectedBytes: 0) { arena in
            var update = Receipts__V1__ReadStateUpdate()
            receipts__v1__read_state_update__init(&update)
            update.user_id = arena.cString(change.user)
            update.epoch = publisherRun
            update.sequence = sequence
            update.state = change.state.build(in: &arena)
            update.thread_state = change.thread.map { $0.build(in: &arena) }
            update.updated_at_ms = change.time.milliseconds
            return ProtobufC.pack(
                &update,
                fields: ProtobufC.fields(receipts__v1__read_state_update__descriptor)
                    + ProtobufC.fields(receipts__v1__unread_count__descriptor)
                    + (change.thread == nil ? 0 : ProtobufC.fields(receipts__v1__thread_read_state__descriptor)),
                arena: &arena,
                pack: receipts__v1__read_state_update__pack
            )
        }
    }

    /// Decodes an update frame (subscribers, tests).
    /// - Throws: `WireError` `.malformedFrame` for bytes that are not a `ReadStateUpdate`.
    public static func decode(_ frame: UnsafeRawBufferPointer) throws(WireError) -> ReadStateUpdate {
        try ProtobufC.unpack(
            frame,
            as: "ReadStateUpdate",
            unpack: receipts__v1__read_state_update__unpack
        ) { (update) throws(WireError) in
            let state =
                update.state.map { UnreadCount(wire: $0.pointee) }
                ?? UnreadCount(conversation: "", unread: 0, isMarkedUnread: false, readUpTo: 0)
            return ReadStateUpdate(
                publisherRun: update.epoch,
                sequence: update.sequence,
                change: ReadStateChange(
                    user: String(wire: update.user_id),
                    state: state,
                    thread: update.thread_state.map { ThreadReadState(wire: $0.pointee) },
                    time: Timestamp(milliseconds: update.updated_at_ms)
                )
            )
        }
    }

    /// Decodes an update frame; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ frame: [UInt8]) throws(WireError) -> ReadStateUpdate {
        try ProtobufC.withBytes(frame) { (bytes) throws(WireError) in try decode(bytes) }
    }
}
