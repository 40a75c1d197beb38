import ReceiptsCore
import ReceiptsWire

/// The limits a hostile or broken gateway hits, and their checks: how many frames one ingest
/// connection may have waiting for durability, how many events one batch may hold, how many
/// bytes an id may have.
///
/// A frame over a limit is refused whole, before anything of it is applied or logged: accepted
/// frames are logged and replayed, so a frame must be taken or refused as a unit for replay to
/// reach the same state.
struct GatewayLimits {
    /// Which limit a frame hit: the `limit` label of `receiptd.limits.refused`.
    enum Limit: String, CaseIterable, CustomStringConvertible {
        case framesInFlight = "frames_in_flight"
        case eventsPerBatch = "events_per_batch"
        case idLength = "id_length"

        var description: String { rawValue }
    }

    /// Acknowledged frames one ingest connection may have waiting for durability.
    let maxFramesInFlight: Int
    /// Events one batch may hold.
    let maxBatchEvents: Int
    /// UTF-8 bytes any id may have.
    let maxIDBytes: Int

    /// Refuses a frame from a connection that already has `waiting` frames waiting for durability.
    ///
    /// UNAVAILABLE, because the frame is fine and only early: a gateway re-sends it once earlier
    /// frames are acknowledged (ReceiptsClient does, after its back-off).
    func check(framesInFlight waiting: Int) -> FrameRefusal? {
        guard waiting >= maxFramesInFlight else { return nil }
        return FrameRefusal(
            code: .unavailable,
            message: "this connection already has \(waiting) frames waiting for durability (the limit of frames in "
                + "flight per connection is \(maxFramesInFlight)); re-send once earlier frames are acknowledged",
            limit: .framesInFlight
        )
    }

    /// Refuses a batch with too many events (FRAME_TOO_LARGE). An id that is too long is
    /// refused while the batch is decoded (`EventBatchCodec.decode`'s `maxIDBytes`): the length
    /// of each string is known as it is made, where a second pass over the events cost about
    /// 600 instructions per event.
    func check(batchOf count: Int) -> FrameRefusal? {
        guard count <= maxBatchEvents else {
            return FrameRefusal(
                code: .frameTooLarge,
                message: "batch of \(count) events exceeds the limit of \(maxBatchEvents) events per batch",
                limit: .eventsPerBatch
            )
        }
        return nil
    }

    /// Refuses a query with an id that is too long (INVALID_ARGUMENT, naming the field).
    func check(_ query: Query) -> FrameRefusal? {
        if case .readDetail(_, _, _, let cursor) = query, cursor.utf8.count > maxIDBytes + Self.cursorOverheadBytes {
            return FrameRefusal(
                code: .invalidArgument,
                message: "query: cursor is \(cursor.utf8.count) bytes, over the limit of "
                    + "\(maxIDBytes + Self.cursorOverheadBytes) bytes per cursor (an id and \(Self.cursorOverheadBytes))",
                limit: .idLength
            )
        }
        let found: (field: String, bytes: Int)? =
            switch query {
            case .messageStatus(let conversation, let message, let viewer):
                overLong("conversation_id", conversation) ?? overLong("message_id", message)
                    ?? overLong("viewer.user_id", viewer.user)
            case .readDetail(let conversation, let message, _, _):
                overLong("conversation_id", conversation) ?? overLong("message_id", message)
            case .lastSent(let conversation, let viewer):
                overLong("conversation_id", conversation) ?? overLong("viewer.user_id", viewer.user)
            case .unreadCounts(let user, let conversations):
                overLong("user_id", user) ?? overLong("conversation_ids", conversations)
            case .snapshot(let conversation, _):
                overLong("conversation_id", conversation)
            case .releaseConversations(_, _, let conversations):
                overLong("conversation_ids", conversations)
            case .demote(let to):
                overLong("to", to)
            case .health, .stats, .compact, .topology, .prepareMove, .exportConversations, .importConversations,
                .commitMove:
                nil
            }
        return found.map { idRefusal("query: \($0.field)", $0.bytes) }
    }

    private func idRefusal(_ what: String, _ bytes: Int) -> FrameRefusal {
        FrameRefusal(
            code: .invalidArgument,
            message: "\(what) is \(bytes) bytes, over the limit of \(maxIDBytes) bytes per id",
            limit: .idLength
        )
    }

    /// What a "Read by" cursor holds beside a user id: a state digit, a time and two separators.
    static let cursorOverheadBytes = 24

    private func overLong(_ field: String, _ id: String) -> (field: String, bytes: Int)? {
        let bytes = id.utf8.count
        return bytes > maxIDBytes ? (field, bytes) : nil
    }

    /// The first over-long id of a repeated field, named with its index (`member_ids[2]`).
    private func overLong(_ field: String, _ ids: [String]) -> (field: String, bytes: Int)? {
        // The name is built only for the id that is refused: this runs for every id of a query's list.
        for (index, id) in ids.enumerated() where id.utf8.count > maxIDBytes {
            return ("\(field)[\(index)]", id.utf8.count)
        }
        return nil
    }
}

extension ServiceConfiguration {
    /// The gateway limits this configuration sets.
    var gatewayLimits: GatewayLimits {
        GatewayLimits(maxFramesInFlight: maxFramesInFlight, maxBatchEvents: maxBatchEvents, maxIDBytes: maxIDBytes)
    }
}
