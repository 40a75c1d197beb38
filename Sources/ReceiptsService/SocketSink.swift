import ReceiptsWire
import ZeroMQ

/// A pipeline's output on the worker's sockets: updates to the publishing thread's PUB, replies
/// on the ingest and query ROUTERs (`ROUTER_MANDATORY`, so a reply to a peer that left is an
/// error, not silence).
final class SocketSink: PipelineSink {
    private let updates: PublishingThread
    private let ingest: ZMQSocket
    private let queries: ZMQSocket

    init(updates: PublishingThread, ingest: ZMQSocket, queries: ZMQSocket) {
        self.updates = updates
        self.ingest = ingest
        self.queries = queries
    }

    func publish(topic: [UInt8], update: PublishedUpdate) {
        updates.publish(topic: topic, update: update)
    }

    var followsUserTopics: Bool { updates.followsUserTopics }

    func takeNewFollowers() -> [String] { updates.takeNewFollowers() }

    func send(_ frames: [[UInt8]], on endpoint: ReplyEndpoint) -> ReplyDelivery {
        let socket = endpoint == .ingest ? ingest : queries
        do {
            return try socket.send(frames, dontWait: true) ? .sent : .wouldBlock
        } catch {
            return .unroutable(error)
        }
    }
}
