import CReceiptsProto
public import ReceiptsCore

/// A question to a worker's query endpoint (`receipts.v1.Query`).
public enum Query: Hashable, Sendable {
    /// One message's status, with display text for `viewer`.
    case messageStatus(conversation: String, message: String, viewer: Viewer)
    /// Who read a message (the "Read by" sheet): all of it (`pageSize` 0), or the page of
    /// `pageSize` lines after `cursor` (a `ReadDetailCursor.token`; empty for the first page).
    case readDetail(conversation: String, message: String, pageSize: Int = 0, cursor: String = "")
    /// The status of the viewer's latest normal message in the conversation.
    case lastSent(conversation: String, viewer: Viewer)
    /// A user's unread counts; no conversations means all of the user's on the worker.
    case unreadCounts(user: String, conversations: [String])
    /// A conversation's state for a (re)starting subscriber; limit 0 means all retained messages.
    case snapshot(conversation: String, limit: Int)
    /// Is the worker serving.
    case health
    /// The worker's counters.
    case stats
    /// Snapshot the worker's state and remove the log segments it covers.
    case compact
    /// Where the worker stands in a worker count change (deploy/SCALING.md).
    case topology
    /// Record that the cluster goes from `from` to `to` workers under `epoch`.
    case prepareMove(epoch: UInt64, from: Int, to: Int)
    /// Freeze up to `limit` conversations that move to `destination` and answer their state.
    case exportConversations(epoch: UInt64, destination: Int, limit: Int)
    /// Make exported conversations the worker's own, durably; `last`: the sender has no more.
    case importConversations(epoch: UInt64, sender: Int, state: [UInt8], last: Bool)
    /// Forget conversations that `destination` imported.
    case releaseConversations(epoch: UInt64, destination: Int, conversations: [String])
    /// Every conversation moved: the target count becomes the worker count.
    case commitMove(epoch: UInt64)
    /// Hand the ordinal over to the standby `to` (empty: any in-sync standby) and become a
    /// standby (a switchover, deploy/REPLICATION.md section 12.2).
    case demote(to: String)

    /// The query as a frame body. A negative or too-large snapshot limit is clamped into `uint32`.
    /// - Parameter allowStandby: Accept an answer from a standby, which may be behind the primary
    ///   (`allow_standby`, deploy/REPLICATION.md section 10); false asks the primary only.
    public func encode(allowStandby: Bool = false) -> [UInt8] {
        Arena.with(expectedBytes: 256) { arena in
            var query = Receipts__V1__Query()
            receipts__v1__query__init(&query)
            query.allow_standby = allowStandby ? 1 : 0
            switch self {
            case .messageStatus(let conversation, let message, let viewer):
                let m = arena.message(receipts__v1__message_status_query__init)
                m.pointee.conversation_id = arena.cString(conversation)
                m.pointee.message_id = arena.cString(message)
                m.pointee.viewer = viewer.build(in: &arena)
                query.message_status = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_MESSAGE_STATUS
            case .readDetail(let conversation, let message, let pageSize, let cursor):
                let m = arena.message(receipts__v1__read_detail_query__init)
                m.pointee.conversation_id = arena.cString(conversation)
                m.pointee.message_id = arena.cString(message)
                m.pointee.page_size = UInt32(clamping: pageSize)
                m.pointee.cursor = arena.cString(cursor)
                query.read_detail = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_READ_DETAIL
            case .lastSent(let conversation, let viewer):
                let m = arena.message(receipts__v1__last_sent_query__init)
                m.pointee.conversation_id = arena.cString(conversation)
                m.pointee.viewer = viewer.build(in: &arena)
                query.last_sent = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_LAST_SENT
            case .unreadCounts(let user, let conversations):
                let m = arena.message(receipts__v1__unread_counts_query__init)
                m.pointee.user_id = arena.cString(user)
                (m.pointee.n_conversation_ids, m.pointee.conversation_ids) = arena.cStrings(conversations)
                query.unread_counts = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_UNREAD_COUNTS
            case .snapshot(let conversation, let limit):
                let m = arena.message(receipts__v1__snapshot_query__init)
                m.pointee.conversation_id = arena.cString(conversation)
                m.pointee.limit = UInt32(clamping: limit)
                query.snapshot = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_SNAPSHOT
            case .health:
                query.health = arena.message(receipts__v1__health_query__init)
                query.kind_case = RECEIPTS__V1__QUERY__KIND_HEALTH
            case .stats:
                query.stats = arena.message(receipts__v1__stats_query__init)
                query.kind_case = RECEIPTS__V1__QUERY__KIND_STATS
            case .compact:
                query.compact = arena.message(receipts__v1__compact_query__init)
                query.kind_case = RECEIPTS__V1__QUERY__KIND_COMPACT
            case .topology:
                query.topology = arena.message(receipts__v1__topology_query__init)
                query.kind_case = RECEIPTS__V1__QUERY__KIND_TOPOLOGY
            case .prepareMove(let epoch, let from, let to):
                let m = arena.message(receipts__v1__prepare_move_query__init)
                m.pointee.epoch = epoch
                m.pointee.from_count = UInt32(clamping: from)
                m.pointee.to_count = UInt32(clamping: to)
                query.prepare_move = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_PREPARE_MOVE
            case .exportConversations(let epoch, let destination, let limit):
                let m = arena.message(receipts__v1__export_query__init)
                m.pointee.epoch = epoch
                m.pointee.destination = UInt32(clamping: destination)
                m.pointee.limit = UInt32(clamping: limit)
                query.export_conversations = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_EXPORT_CONVERSATIONS
            case .importConversations(let epoch, let sender, let state, let last):
                let m = arena.message(receipts__v1__import_query__init)
                m.pointee.epoch = epoch
                m.pointee.sender = UInt32(clamping: sender)
                m.pointee.state = arena.binary(state)
                m.pointee.last = last ? 1 : 0
                query.import_conversations = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_IMPORT_CONVERSATIONS
            case .releaseConversations(let epoch, let destination, let conversations):
                let m = arena.message(receipts__v1__release_query__init)
                m.pointee.epoch = epoch
                m.pointee.destination = UInt32(clamping: destination)
                (m.pointee.n_conversation_ids, m.pointee.conversation_ids) = arena.cStrings(conversations)
                query.release_conversations = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_RELEASE_CONVERSATIONS
            case .commitMove(let epoch):
                let m = arena.message(receipts__v1__commit_move_query__init)
                m.pointee.epoch = epoch
                query.commit_move = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_COMMIT_MOVE
            case .demote(let to):
                let m = arena.message(receipts__v1__demote_query__init)
                m.pointee.to = arena.cString(to)
                query.demote = m
                query.kind_case = RECEIPTS__V1__QUERY__KIND_DEMOTE
            }
            return ProtobufC.pack(&query, size: receipts__v1__query__get_packed_size, pack: receipts__v1__query__pack)
        }
    }

    /// Decodes a query frame.
    /// - Throws: `WireError` `.malformedFrame` for bytes that are not a `Query`,
    ///   `.unknownKind` when no kind this build knows is set (answer ERROR_CODE_UNKNOWN_KIND),
    ///   `.invalidField` naming the field when a string is not UTF-8 (`query: conversation_id is
    ///   not valid UTF-8`) or holds a NUL (`query: conversation_id holds a NUL byte`): repaired
    ///   or cut at the NUL, it could name another conversation.
    public static func decode(_ frame: UnsafeRawBufferPointer) throws(WireError) -> Query {
        try decodeAllowingStandby(frame).query
    }

    /// Decodes a query frame with its `allow_standby` flag; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    /// - Returns: The query, and whether it accepts an answer from a standby.
    public static func decodeAllowingStandby(
        _ frame: UnsafeRawBufferPointer
    ) throws(WireError) -> (query: Query, allowStandby: Bool) {
        try ProtobufC.unpack(
            frame,
            as: "Query",
            unpack: receipts__v1__query__unpack
        ) { (query) throws(WireError) in
            (try kind(of: query), query.allow_standby != 0)
        }
    }

    /// Decodes a query frame with its `allow_standby` flag; see
    /// ``decodeAllowingStandby(_:)-(UnsafeRawBufferPointer)``.
    public static func decodeAllowingStandby(_ frame: [UInt8]) throws(WireError) -> (query: Query, allowStandby: Bool) {
        try ProtobufC.withBytes(frame) { (bytes) throws(WireError) in try decodeAllowingStandby(bytes) }
    }

    /// The question of an unpacked query, its strings validated.
    private static func kind(of query: Receipts__V1__Query) throws(WireError) -> Query {
        let strings = RequestStrings(request: .query, invalidUTF8: .refuse)
        switch query.kind_case {
        case RECEIPTS__V1__QUERY__KIND_MESSAGE_STATUS:
            let m = query.message_status?.pointee
            return .messageStatus(
                conversation: try strings.string(m?.conversation_id, "conversation_id"),
                message: try strings.string(m?.message_id, "message_id"),
                viewer: try Viewer(wire: m?.viewer, strings: strings)
            )
        case RECEIPTS__V1__QUERY__KIND_READ_DETAIL:
            let m = query.read_detail?.pointee
            return .readDetail(
                conversation: try strings.string(m?.conversation_id, "conversation_id"),
                message: try strings.string(m?.message_id, "message_id"),
                pageSize: Int(m?.page_size ?? 0),
                cursor: try strings.string(m?.cursor, "cursor")
            )
        case RECEIPTS__V1__QUERY__KIND_LAST_SENT:
            let m = query.last_sent?.pointee
            return .lastSent(
                conversation: try strings.string(m?.conversation_id, "conversation_id"),
                viewer: try Viewer(wire: m?.viewer, strings: strings)
            )
        case RECEIPTS__V1__QUERY__KIND_UNREAD_COUNTS:
            let m = query.unread_counts?.pointee
            return .unreadCounts(
                user: try strings.string(m?.user_id, "user_id"),
                conversations: try strings.strings(
                    m?.conversation_ids,
                    count: m?.n_conversation_ids ?? 0,
                    "conversation_ids"
                )
            )
        case RECEIPTS__V1__QUERY__KIND_SNAPSHOT:
            let m = query.snapshot?.pointee
            return .snapshot(
                conversation: try strings.string(m?.conversation_id, "conversation_id"),
                limit: Int(m?.limit ?? 0)
            )
        case RECEIPTS__V1__QUERY__KIND_HEALTH:
            return .health
        case RECEIPTS__V1__QUERY__KIND_STATS:
            return .stats
        case RECEIPTS__V1__QUERY__KIND_COMPACT:
            return .compact
        case RECEIPTS__V1__QUERY__KIND_TOPOLOGY:
            return .topology
        case RECEIPTS__V1__QUERY__KIND_PREPARE_MOVE:
            let m = query.prepare_move?.pointee
            return .prepareMove(
                epoch: m?.epoch ?? 0,
                from: Int(m?.from_count ?? 0),
                to: Int(m?.to_count ?? 0)
            )
        case RECEIPTS__V1__QUERY__KIND_EXPORT_CONVERSATIONS:
            let m = query.export_conversations?.pointee
            return .exportConversations(
                epoch: m?.epoch ?? 0,
                destination: Int(m?.destination ?? 0),
                limit: Int(m?.limit ?? 0)
            )
        case RECEIPTS__V1__QUERY__KIND_IMPORT_CONVERSATIONS:
            let m = query.import_conversations?.pointee
            return .importConversations(
                epoch: m?.epoch ?? 0,
                sender: Int(m?.sender ?? 0),
                state: m.map { [UInt8](wire: $0.state) } ?? [],
                last: (m?.last ?? 0) != 0
            )
        case RECEIPTS__V1__QUERY__KIND_RELEASE_CONVERSATIONS:
            let m = query.release_conversations?.pointee
            return .releaseConversations(
                epoch: m?.epoch ?? 0,
                destination: Int(m?.destination ?? 0),
                conversations: try strings.strings(
                    m?.conversation_ids,
                    count: m?.n_conversation_ids ?? 0,
                    "conversation_ids"
                )
            )
        case RECEIPTS__V1__QUERY__KIND_COMMIT_MOVE:
            return .commitMove(epoch: query.commit_move?.pointee.epoch ?? 0)
        case RECEIPTS__V1__QUERY__KIND_DEMOTE:
            return .demote(to: try strings.string(query.demote?.pointee.to, "to"))
        default:
            throw WireError(code: .unknownKind, message: "Query has no kind this build knows")
        }
    }

    /// Decodes a query frame; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ frame: [UInt8]) throws(WireError) -> Query {
        try ProtobufC.withBytes(frame) { (bytes) throws(WireError) in try decode(bytes) }
    }
}
