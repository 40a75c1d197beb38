import ReceiptsCore
import ReceiptsWire

/// Answers the engine's queries: status, who-read-it, last sent, unread counts, snapshot.
///
/// Every answer comes from the engine's public view, in which private reads are deliveries.
struct QueryHandler {
    let engine: ReceiptEngine

    /// The answer to a query about the engine's state, as a primary and a standby both give it.
    ///
    /// - Parameters:
    ///   - publisherRun: The run a snapshot's update stream continues (0 for a member that
    ///     publishes nothing).
    ///   - publishedSequence: A conversation's last published sequence, for a snapshot.
    ///   - userTopicRun: The run of the users' topics, for unread counts (0 for a member that
    ///     publishes nothing).
    ///   - publishedUserSequence: A user topic's last published sequence, for unread counts.
    /// - Returns: nil for the kinds a member answers about itself (health, stats, compact) and
    ///   for the move steps and the hand-over.
    func answer(
        _ query: Query,
        publisherRun: UInt64,
        publishedSequence: (String) -> UInt64,
        userTopicRun: UInt64,
        publishedUserSequence: (String) -> UInt64
    ) -> QueryReply? {
        switch query {
        case .messageStatus(let conversation, let message, let viewer):
            messageStatus(conversation: conversation, message: message, viewer: viewer)
        case .readDetail(let conversation, let message, let pageSize, let cursor):
            readDetail(conversation: conversation, message: message, pageSize: pageSize, cursor: cursor)
        case .lastSent(let conversation, let viewer):
            lastSent(conversation: conversation, viewer: viewer)
        case .unreadCounts(let user, let conversations):
            .unreadCounts(
                engine.unreadCounts(user: user, conversations: conversations),
                publisherRun: userTopicRun,
                sequence: publishedUserSequence(user),
                threads: engine.threadReadStates(user: user, conversations: conversations)
            )
        case .snapshot(let conversation, let limit):
            snapshot(
                conversation: conversation,
                limit: limit,
                publisherRun: publisherRun,
                publishedSequence: publishedSequence(conversation)
            )
        case .health, .stats, .compact, .topology, .prepareMove, .exportConversations, .importConversations,
            .releaseConversations, .commitMove, .demote:
            nil
        }
    }

    /// The status of one message, with display text for `viewer`.
    func messageStatus(conversation: String, message: String, viewer: Viewer) -> QueryReply {
        if let refusal = unknownSetting(of: viewer) { return refusal }
        return owned(conversation) {
            guard let status = engine.status(conversation: conversation, message: message) else {
                return notFound("message \(message) in conversation \(conversation)")
            }
            return .messageStatus(status, displayText: DisplayText.text(for: status, viewer: viewer))
        }
    }

    /// The who-read-it sheet of one message, or one page of it.
    func readDetail(conversation: String, message: String, pageSize: Int, cursor: String) -> QueryReply {
        guard pageSize > 0 || cursor.isEmpty else {
            return .error(ErrorReply(code: .invalidArgument, message: "a cursor needs a page_size"))
        }
        return owned(conversation) {
            let detail: ReadDetail?
            if pageSize == 0 {
                detail = engine.readDetail(conversation: conversation, message: message)
            } else {
                let page = ReadDetailPage(size: pageSize, after: cursor.isEmpty ? nil : cursor)
                do throws(ReadDetailCursor.NotACursor) {
                    detail = try engine.readDetail(conversation: conversation, message: message, page: page)
                } catch {
                    return .error(
                        ErrorReply(
                            code: .invalidArgument,
                            message: "cursor \"\(error.token)\" is not a next_cursor of message \(message) "
                                + "in conversation \(conversation)"
                        )
                    )
                }
            }
            guard let detail else { return notFound("message \(message) in conversation \(conversation)") }
            return .readDetail(detail)
        }
    }

    /// The status of the viewer's latest normal message in a conversation.
    func lastSent(conversation: String, viewer: Viewer) -> QueryReply {
        if let refusal = unknownSetting(of: viewer) { return refusal }
        return owned(conversation) {
            guard let status = engine.lastSent(conversation: conversation, sender: viewer.user) else {
                return notFound("a message from \(viewer.user) in conversation \(conversation)")
            }
            return .lastSent(status, displayText: DisplayText.text(for: status, viewer: viewer))
        }
    }

    /// A conversation's snapshot, with the publisher's run and the conversation's last published sequence.
    func snapshot(conversation: String, limit: Int, publisherRun: UInt64, publishedSequence: UInt64) -> QueryReply {
        owned(conversation) {
            guard let snapshot = engine.snapshot(conversation: conversation, limit: limit) else {
                return notFound("conversation \(conversation)")
            }
            return .snapshot(snapshot, publisherRun: publisherRun, sequence: publishedSequence)
        }
    }

    /// The answer, NOT_OWNER naming the worker that owns the conversation, or UNAVAILABLE
    /// while it moves between workers (the client asks again).
    private func owned(_ conversation: String, _ answer: () -> QueryReply) -> QueryReply {
        switch engine.route(conversation: conversation) {
        case .serve:
            return answer()
        case .notOwner(let owner):
            return .error(
                ErrorReply(
                    code: .notOwner,
                    message: "conversation \(conversation) belongs to worker \(owner)",
                    ownerWorker: owner
                )
            )
        case .moving:
            return .error(
                ErrorReply(code: .unavailable, message: "conversation \(conversation) is moving between workers")
            )
        }
    }

    /// INVALID_ARGUMENT naming a viewer's time zone or locale that Foundation does not know:
    /// shown in UTC or the root locale instead, the text would be silently wrong.
    private func unknownSetting(of viewer: Viewer) -> QueryReply? {
        let problem: String
        if !DisplayText.isKnownTimeZone(viewer.timeZone) {
            problem =
                "viewer.time_zone \(quoted(viewer.timeZone)) is not a time zone this worker knows "
                + "(an IANA name such as \"Europe/Paris\"; empty means UTC)"
        } else if !DisplayText.isKnownLocale(viewer.locale) {
            problem =
                "viewer.locale \(quoted(viewer.locale)) is not a locale this worker knows "
                + "(an ISO 639 language with an optional region, such as \"fr\" or \"fr_FR\"; empty means en_US)"
        } else {
            return nil
        }
        return .error(ErrorReply(code: .invalidArgument, message: problem))
    }

    /// A setting in quotes, or its length when it is too long to be known (and to repeat).
    private func quoted(_ setting: String) -> String {
        setting.utf8.count <= DisplayText.maxSettingBytes ? "\"\(setting)\"" : "of \(setting.utf8.count) bytes"
    }

    private func notFound(_ what: String) -> QueryReply {
        .error(ErrorReply(code: .notFound, message: "no \(what)"))
    }
}

extension Query {
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
        case .topology: "topology"
        case .prepareMove: "prepare_move"
        case .exportConversations: "export"
        case .importConversations: "import"
        case .releaseConversations: "release"
        case .commitMove: "commit_move"
        case .demote: "demote"
        }
    }

    /// With CURVE on, only operator keys may compact, read the stats, change the worker count
    /// and hand an ordinal over.
    var isForOperators: Bool {
        switch self {
        case .stats, .compact, .topology, .prepareMove, .exportConversations, .importConversations,
            .releaseConversations, .commitMove, .demote:
            true
        default: false
        }
    }

    /// The operator-only kinds, for counters registered at start.
    static let operatorKindNames = [
        "compact", "stats", "topology", "prepare_move", "export", "import", "release", "commit_move", "demote",
    ]
}
