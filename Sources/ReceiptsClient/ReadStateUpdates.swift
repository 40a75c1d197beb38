public import ReceiptsWire

/// The read-state updates of a user's subscription (``ReceiptsClient/subscribe(to:)-(ReadStateTopic)``),
/// a state per conversation whenever it changed; ends when the client shuts down. Iterate it
/// from one task.
public struct ReadStateUpdates: AsyncSequence, Sendable {
    public typealias Element = ReadStateUpdate
    let stream: AsyncStream<ReadStateUpdate>

    public func makeAsyncIterator() -> AsyncStream<ReadStateUpdate>.Iterator {
        stream.makeAsyncIterator()
    }
}
