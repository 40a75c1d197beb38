public import ReceiptsCore
public import ReceiptsWire

extension ReceiptsClient {
    /// A message's status with the text to show under it for one viewer.
    public struct ViewedStatus: Hashable, Sendable {
        /// The status.
        public var status: MessageStatus
        /// `Delivered`, `Read at 5:42 PM`, `Read by some users`, ... (empty when nothing shows).
        public var displayText: String
    }

    /// A conversation's state and where its update stream continues.
    public struct PositionedSnapshot: Hashable, Sendable {
        /// The state.
        public var snapshot: ConversationSnapshot
        /// The owner's publisher run when it was taken (the wire's `publisherRun`): updates of another
        /// run are not a continuation of this snapshot.
        public var publisherRun: UInt64
        /// The last update sequence it covers: follow updates after it.
        public var sequence: UInt64
    }

    /// A message's status with display text for `viewer` (time zone and locale included).
    ///
    /// Like every query about one conversation, it goes to the conversation's owner and
    /// follows NOT_OWNER answers to the owner they name (up to ``Configuration/maxRedirects``),
    /// and asks again after an UNAVAILABLE answer (a conversation frozen while it moves), all
    /// within ``Configuration/queryTimeoutMilliseconds``.
    /// - Throws: ``ReceiptsClientError`` `.notFound` for an unknown message, `.timeout` if no
    ///   answer came in time, and as ``query(_:worker:)``.
    public func status(
        of message: String,
        in conversation: String,
        viewer: Viewer
    ) async throws(ReceiptsClientError) -> ViewedStatus {
        let reply = try await ask(
            .messageStatus(conversation: conversation, message: message, viewer: viewer),
            conversation
        )
        guard case .messageStatus(let status, let text) = reply else { throw unexpected(reply) }
        return ViewedStatus(status: status, displayText: text)
    }

    /// Who read a message and who has it delivered (the "Read By" sheet): all of it, or one
    /// page (most recent reader first); the next page is asked for with
    /// `ReadDetailPage(size:after: detail.nextCursor)` until `nextCursor` is nil.
    /// - Parameter page: The page; nil for the whole sheet.
    public func readDetail(
        of message: String,
        in conversation: String,
        page: ReadDetailPage? = nil
    ) async throws(ReceiptsClientError) -> ReadDetail {
        let query = Query.readDetail(
            conversation: conversation,
            message: message,
            pageSize: page.map { max($0.size, 1) } ?? 0,
            cursor: page?.after ?? ""
        )
        let reply = try await ask(query, conversation)
        guard case .readDetail(let detail) = reply else { throw unexpected(reply) }
        return detail
    }

    /// The status of the viewer's latest normal message in a conversation: the one message
    /// under which the seeds show a receipt.
    public func lastSent(in conversation: String, viewer: Viewer) async throws(ReceiptsClientError) -> ViewedStatus {
        let reply = try await ask(.lastSent(conversation: conversation, viewer: viewer), conversation)
        guard case .lastSent(let status, let text) = reply else { throw unexpected(reply) }
        return ViewedStatus(status: status, displayText: text)
    }

    /// A user's unread counts in the given conversations, or in all of theirs on every worker.
    /// Private reads count here: forward the answer to that user only.
    ///
    /// "Every worker" is every ordinal in ``Cluster/ordinals``: a worker listed beyond the
    /// routing count that answers UNAVAILABLE (a new worker not yet part of the cluster) adds
    /// nothing instead of failing the call.
    public func unreadCounts(
        for user: String,
        in conversations: [String] = []
    ) async throws(ReceiptsClientError) -> [UnreadCount] {
        var byWorker: [Int: [String]] = [:]
        if conversations.isEmpty {
            for worker in configuration.cluster.ordinals { byWorker[worker] = [] }
        } else {
            for conversation in conversations { byWorker[owner(of: conversation), default: []].append(conversation) }
        }
        var counts: [UnreadCount] = []
        for (worker, owned) in byWorker.sorted(by: { $0.key < $1.key }) {
            let reply = try await query(.unreadCounts(user: user, conversations: owned), worker: worker)
            if case .error(let error) = reply, error.code == .unavailable, conversations.isEmpty,
                worker >= configuration.cluster.workerCount
            {
                continue
            }
            guard case .unreadCounts(let part, _, _, _) = try checked(reply) else { throw unexpected(reply) }
            counts += part
        }
        return counts
    }

    /// A conversation's state, to start following its updates after ``PositionedSnapshot/sequence``.
    /// - Parameter limit: The most recent messages to include; 0 for all retained.
    public func snapshot(
        of conversation: String,
        limit: Int = 0
    ) async throws(ReceiptsClientError) -> PositionedSnapshot {
        let reply = try await ask(.snapshot(conversation: conversation, limit: limit), conversation)
        guard case .snapshot(let snapshot, let publisherRun, let sequence) = reply else { throw unexpected(reply) }
        return PositionedSnapshot(snapshot: snapshot, publisherRun: publisherRun, sequence: sequence)
    }

    /// One worker's health.
    public func health(worker: Int) async throws(ReceiptsClientError) -> Health {
        let reply = try await checked(query(.health, worker: worker))
        guard case .health(let health) = reply else { throw unexpected(reply) }
        return health
    }

    /// Every listed worker's health (``Cluster/ordinals``), by ordinal.
    public func health() async throws(ReceiptsClientError) -> [Health] {
        var answers: [Health] = []
        for worker in configuration.cluster.ordinals { answers.append(try await health(worker: worker)) }
        return answers
    }

    /// One worker's counters.
    public func stats(worker: Int) async throws(ReceiptsClientError) -> [Counter] {
        let reply = try await checked(query(.stats, worker: worker))
        guard case .stats(let counters) = reply else { throw unexpected(reply) }
        return counters
    }

    /// Asks a worker to snapshot its state now and remove the log segments it covers.
    public func compact(worker: Int) async throws(ReceiptsClientError) -> CompactResult {
        let reply = try await checked(query(.compact, worker: worker))
        guard case .compact(let result) = reply else { throw unexpected(reply) }
        return result
    }

    /// Asks the conversation's owner, following NOT_OWNER to the owner named and asking again
    /// after UNAVAILABLE (as ``RoutingPolicy`` decides), within the query timeout; an error
    /// reply throws.
    private func ask(_ query: Query, _ conversation: String) async throws(ReceiptsClientError) -> QueryReply {
        let clock = ContinuousClock()
        var route = QueryRoute(
            worker: owner(of: conversation),
            deadline: clock.now + .milliseconds(configuration.queryTimeoutMilliseconds),
            policy: RoutingPolicy(configuration)
        )
        while true {
            let reply = try await self.query(query, worker: route.worker, deadline: route.deadline)
            switch route.next(after: reply, now: clock.now, canReach: { configuration.cluster.worker($0) != nil }) {
            case .follow:
                statistics.queryRedirects.add(1)
            case .retry(let retryAt):
                do {
                    try await Task.sleep(until: retryAt, clock: clock)
                } catch {
                    throw ReceiptsClientError(.cancelled, "the query was cancelled")
                }
                statistics.queryRetries.add(1)
            case .answer(let answer):
                return try checked(answer)
            }
        }
    }

    /// The reply, or its error reply as a thrown ``ReceiptsClientError``.
    private func checked(_ reply: QueryReply) throws(ReceiptsClientError) -> QueryReply {
        guard case .error(let error) = reply else { return reply }
        let code: ReceiptsClientError.Code =
            switch error.code {
            case .notOwner: .notOwner
            case .unavailable: .unavailable
            case .notFound: .notFound
            case .invalidArgument: .invalidArgument
            case .permissionDenied: .permissionDenied
            default: .rejected
            }
        throw ReceiptsClientError(code, "\(error.code): \(error.message)", ownerWorker: error.ownerWorker)
    }

    private func unexpected(_ reply: QueryReply) -> ReceiptsClientError {
        ReceiptsClientError(.malformedReply, "a reply of another kind: \(reply)")
    }
}
