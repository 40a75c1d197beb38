import ReceiptLog
import ReceiptsCore
import ReceiptsWire

@testable import ReceiptsService

/// A pipeline sink that keeps everything the pipeline emits, in order, with the log's durable
/// position at the moment of each emission (so a test can check nothing left early).
final class RecordingSink: PipelineSink {
    /// One emission.
    enum Output {
        case update(StatusUpdate, durable: LogPosition)
        case readState(ReadStateUpdate, durable: LogPosition)
        case reply(ReplyEndpoint, body: [UInt8], durable: LogPosition)
    }

    private(set) var outputs: [Output] = []
    /// Updates that did not survive their encoding, or came under another conversation's (or user's) topic.
    private(set) var malformedUpdates = 0
    /// The pipeline's log, set once it is open.
    var log: ReceiptLog?
    /// Routing ids of peers whose ROUTER queue is full: replies to them are refused (EAGAIN).
    var fullPeers: Set<String> = []
    /// Whether some subscriber follows a user topic, as an XPUB would tell.
    var followsUsers = true

    var followsUserTopics: Bool { followsUsers }

    func publish(topic: [UInt8], update: PublishedUpdate) {
        // Through the wire encoding and decoded by its topic, as subscribers get it.
        let decoded = topic.withUnsafeBytes { topicBytes in
            update.encode().withUnsafeBytes { try? PublishedUpdate.decode(topic: topicBytes, body: $0) }
        }
        switch update {
        case .status(let status)
        where decoded == update
            && topic == Array(Partitioning.exactTopic(for: status.status.conversation).utf8):
            outputs.append(.update(status, durable: durablePosition))
        case .readState(let readState)
        where decoded == update
            && topic == Array(Partitioning.exactUserTopic(for: readState.change.user).utf8):
            outputs.append(.readState(readState, durable: durablePosition))
        default:
            malformedUpdates += 1
        }
    }

    func send(_ frames: [[UInt8]], on endpoint: ReplyEndpoint) -> ReplyDelivery {
        if fullPeers.contains(String(decoding: frames[0], as: UTF8.self)) { return .wouldBlock }
        outputs.append(.reply(endpoint, body: frames.last ?? [], durable: durablePosition))
        return .sent
    }

    private var durablePosition: LogPosition {
        log?.durablePosition ?? LogPosition.zero
    }

    /// The updates, in publishing order.
    var updates: [StatusUpdate] {
        outputs.compactMap { if case .update(let update, _) = $0 { update } else { nil } }
    }

    /// The read-state updates, in publishing order.
    var readStates: [ReadStateUpdate] {
        outputs.compactMap { if case .readState(let update, _) = $0 { update } else { nil } }
    }

    /// The ingest replies, decoded, in sending order.
    func ingestReplies() throws -> [IngestReply] {
        try outputs.compactMap { output in
            guard case .reply(.ingest, let body, _) = output else { return nil }
            return try IngestReply.decode(body)
        }
    }

    /// Forgets what was emitted so far.
    func clear() {
        outputs.removeAll()
    }
}
