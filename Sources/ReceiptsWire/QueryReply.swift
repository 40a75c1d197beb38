import CReceiptsProto
public import ReceiptsCore

/// A worker's answer to a query (`receipts.v1.QueryReply`).
public enum QueryReply: Hashable, Sendable {
    /// A message's status and its display text for the query's viewer.
    case messageStatus(MessageStatus, displayText: String)
    /// The "Read by" sheet of a message.
    case readDetail(ReadDetail)
    /// The status of the viewer's latest normal message, with its display text.
    case lastSent(MessageStatus, displayText: String)
    /// A user's unread counts; a repairing read-state subscriber continues after `sequence`
    /// of the user's topic within `publisherRun`.
    case unreadCounts(
        [UnreadCount],
        publisherRun: UInt64 = 0,
        sequence: UInt64 = 0,
        threads: [ThreadReadState] = []
    )
    /// A conversation's state; follow updates after `sequence` within `publisherRun`.
    case snapshot(ConversationSnapshot, publisherRun: UInt64, sequence: UInt64)
    /// The worker is up.
    case health(Health)
    /// The worker's counters.
    case stats([Counter])
    /// What a compaction did.
    case compact(CompactResult)
    /// The query failed.
    case error(ErrorReply)
    /// Where the worker stands in a worker count change.
    case topology(TopologyReport)
    /// Conversations exported for a move.
    case exportResult(ExportResult)
    /// What an import of a move did: conversations that became the worker's, and those it
    /// held already (a repeat).
    case importResult(imported: Int, alreadyHeld: Int)
    /// The switchover a `demote` query asked for took place.
    case handOver(HandOverResult)

    /// The reply as a frame body.
    /// - Parameter servedBy: The answering member, when a standby answers (follower reads,
    ///   deploy/REPLICATION.md section 10); nil sets no `served_by`, as every worker does until
    ///   replication runs.
    public func encode(servedBy: ServedBy? = nil) -> [UInt8] {
        Arena.with(expectedBytes: 1024) { arena in
            var reply = Receipts__V1__QueryReply()
            receipts__v1__query_reply__init(&reply)
            reply.served_by = servedBy?.build(in: &arena)
            switch self {
            case .messageStatus(let status, let displayText):
                reply.message_status = status.build(displayText: displayText, in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_MESSAGE_STATUS
            case .readDetail(let detail):
                reply.read_detail = detail.build(in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_READ_DETAIL
            case .lastSent(let status, let displayText):
                reply.last_sent = status.build(displayText: displayText, in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_LAST_SENT
            case .unreadCounts(let counts, let publisherRun, let sequence, let threads):
                let m = arena.message(receipts__v1__unread_counts__init)
                (m.pointee.n_counts, m.pointee.counts) = arena.messages(counts) { $0.build(in: &$1) }
                (m.pointee.n_threads, m.pointee.threads) = arena.messages(threads) { $0.build(in: &$1) }
                m.pointee.epoch = publisherRun
                m.pointee.sequence = sequence
                reply.unread_counts = m
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_UNREAD_COUNTS
            case .snapshot(let snapshot, let publisherRun, let sequence):
                reply.snapshot = snapshot.build(publisherRun: publisherRun, sequence: sequence, in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_SNAPSHOT
            case .health(let health):
                reply.health = health.build(in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_HEALTH
            case .stats(let counters):
                let m = arena.message(receipts__v1__stats__init)
                (m.pointee.n_counters, m.pointee.counters) = arena.messages(counters) { $0.build(in: &$1) }
                reply.stats = m
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_STATS
            case .compact(let result):
                reply.compact = result.build(in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_COMPACT
            case .error(let error):
                reply.error = error.build(in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_ERROR
            case .topology(let report):
                reply.topology = report.build(in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_TOPOLOGY
            case .exportResult(let result):
                reply.export_result = result.build(in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_EXPORT_RESULT
            case .importResult(let imported, let alreadyHeld):
                let m = arena.message(receipts__v1__import_result__init)
                m.pointee.imported = UInt32(clamping: imported)
                m.pointee.already_held = UInt32(clamping: alreadyHeld)
                reply.import_result = m
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_IMPORT_RESULT
            case .handOver(let result):
                reply.hand_over = result.build(in: &arena)
                reply.kind_case = RECEIPTS__V1__QUERY_REPLY__KIND_HAND_OVER
            }
            return ProtobufC.pack(
                &reply,
                size: receipts__v1__query_reply__get_packed_size,
                pack: receipts__v1__query_reply__pack
            )
        }
    }

    /// Decodes a reply frame (`receiptctl`, gateways, tests).
    /// - Throws: `WireError` `.malformedFrame` for bytes that are not a `QueryReply`,
    ///   `.unknownKind` when no kind this build knows is set, `.invalidField` for a
    ///   snapshot whose conversation kind is not known.
    public static func decode(_ frame: UnsafeRawBufferPointer) throws(WireError) -> QueryReply {
        try decodeServed(frame).reply
    }

    /// Decodes a reply frame with the member that served it; see
    /// ``decode(_:)-(UnsafeRawBufferPointer)``.
    /// - Returns: The reply, and its `served_by` (nil when the frame has none: a primary's or an
    ///   unreplicated worker's answer).
    public static func decodeServed(
        _ frame: UnsafeRawBufferPointer
    ) throws(WireError) -> (reply: QueryReply, servedBy: ServedBy?) {
        try ProtobufC.unpack(
            frame,
            as: "QueryReply",
            unpack: receipts__v1__query_reply__unpack
        ) { (reply) throws(WireError) in
            (try kind(of: reply), reply.served_by.map { ServedBy(wire: $0.pointee) })
        }
    }

    /// Decodes a reply frame with the member that served it; see ``decodeServed(_:)-(UnsafeRawBufferPointer)``.
    public static func decodeServed(_ frame: [UInt8]) throws(WireError) -> (reply: QueryReply, servedBy: ServedBy?) {
        try ProtobufC.withBytes(frame) { (bytes) throws(WireError) in try decodeServed(bytes) }
    }

    /// The answer of an unpacked reply.
    private static func kind(of reply: Receipts__V1__QueryReply) throws(WireError) -> QueryReply {
        switch reply.kind_case {
        case RECEIPTS__V1__QUERY_REPLY__KIND_MESSAGE_STATUS:
            return .messageStatus(
                MessageStatus(wire: reply.message_status?.pointee),
                displayText: MessageStatus.displayText(wire: reply.message_status?.pointee)
            )
        case RECEIPTS__V1__QUERY_REPLY__KIND_READ_DETAIL:
            return .readDetail(ReadDetail(wire: reply.read_detail?.pointee))
        case RECEIPTS__V1__QUERY_REPLY__KIND_LAST_SENT:
            return .lastSent(
                MessageStatus(wire: reply.last_sent?.pointee),
                displayText: MessageStatus.displayText(wire: reply.last_sent?.pointee)
            )
        case RECEIPTS__V1__QUERY_REPLY__KIND_UNREAD_COUNTS:
            let m = reply.unread_counts?.pointee
            return .unreadCounts(
                [UnreadCount](wire: m?.counts, count: m?.n_counts ?? 0) { UnreadCount(wire: $0) },
                publisherRun: m?.epoch ?? 0,
                sequence: m?.sequence ?? 0,
                threads: [ThreadReadState](wire: m?.threads, count: m?.n_threads ?? 0) { ThreadReadState(wire: $0) }
            )
        case RECEIPTS__V1__QUERY_REPLY__KIND_SNAPSHOT:
            guard let snapshot = reply.snapshot?.pointee else {
                throw WireError(code: .invalidField, message: "QueryReply.snapshot is empty")
            }
            let decoded = try ConversationSnapshot.decode(wire: snapshot)
            return .snapshot(decoded.snapshot, publisherRun: decoded.publisherRun, sequence: decoded.sequence)
        case RECEIPTS__V1__QUERY_REPLY__KIND_HEALTH:
            guard let health = reply.health?.pointee else {
                return .health(
                    Health(state: "", workerIndex: 0, workerCount: 0, uptimeMilliseconds: 0, publisherRun: 0)
                )
            }
            return .health(Health(wire: health))
        case RECEIPTS__V1__QUERY_REPLY__KIND_STATS:
            let m = reply.stats?.pointee
            return .stats([Counter](wire: m?.counters, count: m?.n_counters ?? 0) { Counter(wire: $0) })
        case RECEIPTS__V1__QUERY_REPLY__KIND_COMPACT:
            guard let result = reply.compact?.pointee else {
                return .compact(CompactResult(snapshotBytes: 0, segmentsRemoved: 0, messagesExpired: 0))
            }
            return .compact(CompactResult(wire: result))
        case RECEIPTS__V1__QUERY_REPLY__KIND_ERROR:
            guard let error = reply.error?.pointee else {
                return .error(ErrorReply(code: .internal, message: ""))
            }
            return .error(ErrorReply(wire: error))
        case RECEIPTS__V1__QUERY_REPLY__KIND_TOPOLOGY:
            return .topology(TopologyReport(wire: reply.topology?.pointee))
        case RECEIPTS__V1__QUERY_REPLY__KIND_EXPORT_RESULT:
            return .exportResult(ExportResult(wire: reply.export_result?.pointee))
        case RECEIPTS__V1__QUERY_REPLY__KIND_IMPORT_RESULT:
            let m = reply.import_result?.pointee
            return .importResult(imported: Int(m?.imported ?? 0), alreadyHeld: Int(m?.already_held ?? 0))
        case RECEIPTS__V1__QUERY_REPLY__KIND_HAND_OVER:
            return .handOver(HandOverResult(wire: reply.hand_over?.pointee))
        default:
            throw WireError(code: .unknownKind, message: "QueryReply has no kind this build knows")
        }
    }

    /// Decodes a reply frame; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ frame: [UInt8]) throws(WireError) -> QueryReply {
        try ProtobufC.withBytes(frame) { (bytes) throws(WireError) in try decode(bytes) }
    }
}
