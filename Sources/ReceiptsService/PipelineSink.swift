package import ReceiptsWire

/// Where updates go: receiptd's PUB socket, the load generator's wire-limit sink, or a
/// test's list.
package protocol UpdateSink: AnyObject {
    /// Sends one update: the topic frame, then the encoded update.
    /// Never blocks: past its high-water mark the transport drops, and the sequence gap tells
    /// subscribers.
    func publish(topic: [UInt8], update: PublishedUpdate)

    /// Whether some subscriber follows any user's read-state topic; when none does, the
    /// publisher skips read states altogether.
    var followsUserTopics: Bool { get }

    /// Takes in the subscriptions that arrived since the last call (on the sink's own thread).
    func refreshSubscriptions()

    /// The users whose topic some subscriber started to follow since the last call (any thread).
    func takeNewFollowers() -> [String]
}

extension UpdateSink {
    /// A sink that cannot tell: every topic may be followed.
    package var followsUserTopics: Bool { true }

    /// A sink that cannot tell has nothing to take in.
    package func refreshSubscriptions() {}

    /// A sink that cannot tell sees no new follower.
    package func takeNewFollowers() -> [String] { [] }
}

/// Where a `ReceiptPipeline`'s output goes: updates and replies, in the order the
/// pipeline emits them, on the pipeline's thread.
protocol PipelineSink: UpdateSink {
    /// Sends a reply (the envelope's routing frames, then the body) on one of the ROUTER endpoints.
    func send(_ frames: [[UInt8]], on endpoint: ReplyEndpoint) -> ReplyDelivery
}

/// The endpoint a reply goes out on.
enum ReplyEndpoint {
    case ingest, queries
}

/// What became of a reply.
enum ReplyDelivery {
    case sent
    /// The peer's queue is full; the pipeline holds the reply and offers it again.
    case wouldBlock
    /// The peer went away before its reply was ready.
    case unroutable(any Error)
}
