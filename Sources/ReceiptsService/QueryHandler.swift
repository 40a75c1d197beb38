import ReceiptsCore
import ReceiptsWire

/// Answers the engine's queries: status, who-read-it, last sent, unread counts, snapshot.
///
/// Every answer comes from the engine's public view, in which private reads are deliveries.
struct QueryHandler {
    let engine: ReceiptEngine
    let workerIndex: Int
    let workerCount: Int

    /// The reply to an engine query (health, stats and compaction are the loop's own).
    /// - Parameters:
    ///   - epoch: the publisher's epoch, for a snapshot.
    ///   - publishedSequence: for a snapshot, the conversation's last published update sequence.
    func answer(_ query: Query, epoch: UInt64, publishedSequence: (String) -> UInt64) -> QueryReply {
        if let conversation = query.conversation, let refusal = ownershipRefusal(conversation) {
            return .error(refusal)
        }
        switch query {
        case .messageStatus(let conversation, let message, let viewer):
            guard let status = engine.status(conversation: conversation, message: message) else {
                return notFound("message \(message) in conversation \(conversation)")
            }
            return .messageStatus(status, displayText: DisplayText.text(for: status, viewer: viewer))
        case .readDetail(let conversation, let message):
            guard let detail = engine.readDetail(conversation: conversation, message: message) else {
                return notFound("message \(message) in conversation \(conversation)")
            }
            return .readDetail(detail)
        case .lastSent(let conversation, let viewer):
            guard let status = engine.lastSent(conversation: conversation, sender: viewer.user) else {
                return notFound("a message from \(viewer.user) in conversation \(conversation)")
            }
            return .lastSent(status, displayText: DisplayText.text(for: status, viewer: viewer))
        case .unreadCounts(let user, let conversations):
            return .unreadCounts(engine.unreadCounts(user: user, conversations: conversations))
        case .snapshot(let conversation, let limit):
            guard let snapshot = engine.snapshot(conversation: conversation, limit: limit) else {
                return notFound("conversation \(conversation)")
            }
            return .snapshot(snapshot, epoch: epoch, sequence: publishedSequence(conversation))
        case .health, .stats, .compact:
            return .error(ErrorReply(code: .internal, message: "\(query.kindName) is not an engine query"))
        }
    }

    private func ownershipRefusal(_ conversation: String) -> ErrorReply? {
        let owner = Partitioning.owner(of: conversation, workerCount: workerCount)
        guard owner != workerIndex else { return nil }
        return ErrorReply(
            code: .notOwner,
            message: "conversation \(conversation) belongs to worker \(owner)",
            ownerWorker: owner
        )
    }

    private func notFound(_ what: String) -> QueryReply {
        .error(ErrorReply(code: .notFound, message: "no \(what)"))
    }
}

extension Query {
    /// The conversation the query is about, if any.
    var conversation: String? {
        switch self {
        case .messageStatus(let conversation, _, _), .readDetail(let conversation, _),
            .lastSent(let conversation, _), .snapshot(let conversation, _):
            conversation
        case .unreadCounts, .health, .stats, .compact:
            nil
        }
    }

    /// A short name for counters and logs.
    var kindName: String {
        switch self {
        case .messageStatus: "message_status"
        case .readDetail: "read_detail"
        case .lastSent: "last_sent"
        case .unreadCounts: "unread_counts"
        case .snapshot: "snapshot"
        case .health: "health"
        case .stats: "stats"
        case .compact: "compact"
        }
    }
}
