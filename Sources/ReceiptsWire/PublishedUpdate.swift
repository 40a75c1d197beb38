import ReceiptsCore

/// One message of a worker's PUB socket: a message's status on its conversation's topic, or a
/// user's own read state on the user's topic (`Partitioning.userTopic(for:)`).
public enum PublishedUpdate: Hashable, Sendable {
    case status(StatusUpdate)
    case readState(ReadStateUpdate)

    /// The update as its frame body.
    public func encode() -> [UInt8] {
        switch self {
        case .status(let update): update.encode()
        case .readState(let update): update.encode()
        }
    }

    /// Whether a topic frame is a user's read-state topic (else a conversation's): its first
    /// bytes are `Partitioning.userTopicPrefix`, which no conversation topic starts with.
    public static func isUserTopic(_ topic: UnsafeRawBufferPointer) -> Bool {
        topic.starts(with: Partitioning.userTopicPrefix.utf8)
    }

    /// Decodes one PUB message by its topic: a `ReadStateUpdate` under a user topic, else a
    /// `StatusUpdate`.
    /// - Throws: `WireError` `.malformedFrame` for a body that is not the topic's message.
    public static func decode(
        topic: UnsafeRawBufferPointer,
        body: UnsafeRawBufferPointer
    ) throws(WireError) -> PublishedUpdate {
        isUserTopic(topic) ? .readState(try ReadStateUpdate.decode(body)) : .status(try StatusUpdate.decode(body))
    }
}
