import ReceiptLog
import ReceiptsCore
import ReceiptsWire

/// A caller's answer channel: resumed exactly once, by the loop, with the result.
typealias Reply<Value: Sendable> = CheckedContinuation<Result<Value, ReceiptsClientError>, Never>

/// What callers hand to the client's loop thread.
enum ClientCommand: Sendable {
    /// Deliver events (ids already assigned) and answer with one outcome per event; without a
    /// reply nobody waits. `outboxPosition`: where the events' outbox record ends; they leave
    /// once the outbox is durable there, and the outbox is told once they are answered.
    case send(id: UInt64, events: [Event], outboxPosition: LogPosition?, reply: Reply<[EventOutcome]>?)
    /// Ask one worker; `id` lets a cancellation find it. The reply must come by `deadline`
    /// (nil: the configured query timeout from now), or the caller is answered `.timeout`.
    case query(id: UInt64, worker: Int, query: Query, deadline: ContinuousClock.Instant?, reply: Reply<QueryReply>)
    /// Start following a topic.
    case subscribe(id: UInt64, topic: SubscriptionTopic, output: AsyncStream<StatusUpdate>.Continuation)
    /// Start following a user's read state.
    case subscribeReadState(id: UInt64, topic: ReadStateTopic, output: AsyncStream<ReadStateUpdate>.Continuation)
    /// The caller of `send`, a query or `flush` stopped waiting; posted only after the request.
    case cancel(id: UInt64)
    /// The consumer of a subscription went away.
    case unsubscribe(id: UInt64)
    /// Answer once everything sent or enqueued before it is acknowledged.
    case flush(id: UInt64, reply: Reply<Void>)
    /// Stop: fail what waits, close the sockets, end the thread.
    case shutdown
}
