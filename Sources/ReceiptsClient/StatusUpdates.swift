public import ReceiptsWire

/// The status updates of a subscription (``ReceiptsClient/subscribe(to:)-(SubscriptionTopic)``),
/// in order per conversation; ends when the client shuts down. Iterate it from one task.
public struct StatusUpdates: AsyncSequence, Sendable {
    public typealias Element = StatusUpdate
    let stream: AsyncStream<StatusUpdate>

    public func makeAsyncIterator() -> AsyncStream<StatusUpdate>.Iterator {
        stream.makeAsyncIterator()
    }
}
