import CReceiptsProto

/// What the primary says to a standby on the replication endpoint
/// (`receipts.v1.ReplicationMessage`, deploy/REPLICATION.md section 4.3): one frame, and for
/// records and snapshot chunks a second frame with their bytes, raw.
public enum ReplicationMessage: Hashable, Sendable {
    /// The primary serves the session.
    case accepted(FollowAccepted)
    /// Records of the primary's log, exactly as in a segment.
    case records(Records)
    /// A piece of the primary's newest snapshot file.
    case snapshot(SnapshotChunk)
    /// The primary is alive; its positions.
    case heartbeat(Heartbeat)
    /// The member does not serve the session: `NOT_PRIMARY` naming the primary, or
    /// `INVALID_ARGUMENT` (engine settings, ordinal).
    case refused(session: UInt64, error: ErrorReply)

    /// The answer to a `Follow` the primary serves (`receipts.v1.FollowAccepted`).
    public struct FollowAccepted: Hashable, Sendable {
        /// The session of the `Follow`.
        public var session: UInt64
        /// The primary's term.
        public var term: UInt64
        /// Truncate to here if the log is longer; records (or the snapshot) follow from here.
        public var continueAt: UInt64
        /// A snapshot comes first; `continueAt` is then its position.
        public var snapshotFirst: Bool

        /// Creates an acceptance.
        /// - Parameters:
        ///   - session: The session of the `Follow`.
        ///   - term: The primary's term.
        ///   - continueAt: Where the standby's log continues.
        ///   - snapshotFirst: Whether a snapshot comes first.
        public init(session: UInt64, term: UInt64, continueAt: UInt64, snapshotFirst: Bool) {
            self.session = session
            self.term = term
            self.continueAt = continueAt
            self.snapshotFirst = snapshotFirst
        }
    }

    /// Records of the primary's log (`receipts.v1.Records` and frame 2).
    public struct Records: Hashable, Sendable {
        /// The session.
        public var session: UInt64
        /// The primary's term.
        public var term: UInt64
        /// Where the first record starts.
        public var start: UInt64
        /// The records, exactly as in a segment (frame 2), at most
        /// ``ReplicationFrames/maxRecordsBytes``; never empty on the wire.
        public var bytes: [UInt8]
        /// The primary's frontier A: the standby applies up to min(A, its durable).
        public var acknowledged: UInt64
        /// The primary's appended end.
        public var primaryEnd: UInt64

        /// Where the last record ends (the wire's `end`).
        public var end: UInt64 { start &+ UInt64(bytes.count) }

        /// Creates records.
        /// - Parameters:
        ///   - session: The session.
        ///   - term: The primary's term.
        ///   - start: Where the first record starts.
        ///   - bytes: The records as in a segment.
        ///   - acknowledged: The primary's frontier.
        ///   - primaryEnd: The primary's appended end.
        public init(
            session: UInt64,
            term: UInt64,
            start: UInt64,
            bytes: [UInt8],
            acknowledged: UInt64,
            primaryEnd: UInt64
        ) {
            self.session = session
            self.term = term
            self.start = start
            self.bytes = bytes
            self.acknowledged = acknowledged
            self.primaryEnd = primaryEnd
        }
    }

    /// A piece of the primary's newest snapshot file (`receipts.v1.SnapshotChunk` and frame 2).
    public struct SnapshotChunk: Hashable, Sendable {
        /// The session.
        public var session: UInt64
        /// The snapshot's position P.
        public var position: UInt64
        /// The whole file's size.
        public var fileBytes: UInt64
        /// The chunk's offset in the file.
        public var offset: UInt64
        /// The chunk's bytes (frame 2), at most ``ReplicationFrames/maxChunkBytes``.
        public var bytes: [UInt8]
        /// On the first chunk: the primary's terms up to P.
        public var terms: [TermStart]
        /// On the first chunk: the primary's engine-settings text.
        public var engineSettings: String

        /// The chunk ends the file (the wire's `last`).
        public var isLast: Bool { offset &+ UInt64(bytes.count) == fileBytes }

        /// Creates a chunk.
        /// - Parameters:
        ///   - session: The session.
        ///   - position: The snapshot's position.
        ///   - fileBytes: The whole file's size.
        ///   - offset: The chunk's offset in the file.
        ///   - bytes: The chunk's bytes.
        ///   - terms: On the first chunk, the primary's terms up to the position.
        ///   - engineSettings: On the first chunk, the primary's engine-settings text.
        public init(
            session: UInt64,
            position: UInt64,
            fileBytes: UInt64,
            offset: UInt64,
            bytes: [UInt8],
            terms: [TermStart] = [],
            engineSettings: String = ""
        ) {
            self.session = session
            self.position = position
            self.fileBytes = fileBytes
            self.offset = offset
            self.bytes = bytes
            self.terms = terms
            self.engineSettings = engineSettings
        }
    }

    /// The primary's positions on an idle session (`receipts.v1.Heartbeat`).
    public struct Heartbeat: Hashable, Sendable {
        /// The session.
        public var session: UInt64
        /// The primary's term.
        public var term: UInt64
        /// The primary's frontier A.
        public var acknowledged: UInt64
        /// The primary's appended end.
        public var primaryEnd: UInt64
        /// The primary's durable end.
        public var primaryDurable: UInt64

        /// Creates a heartbeat.
        /// - Parameters:
        ///   - session: The session.
        ///   - term: The primary's term.
        ///   - acknowledged: The primary's frontier.
        ///   - primaryEnd: The primary's appended end.
        ///   - primaryDurable: The primary's durable end.
        public init(session: UInt64, term: UInt64, acknowledged: UInt64, primaryEnd: UInt64, primaryDurable: UInt64) {
            self.session = session
            self.term = term
            self.acknowledged = acknowledged
            self.primaryEnd = primaryEnd
            self.primaryDurable = primaryDurable
        }
    }

    /// The message as its frames: the body, then the records' or the chunk's bytes.
    public func encode() -> [[UInt8]] {
        Arena.with(expectedBytes: 256) { arena in
            var message = Receipts__V1__ReplicationMessage()
            receipts__v1__replication_message__init(&message)
            var payload: [UInt8]?
            switch self {
            case .accepted(let accepted):
                let m = arena.message(receipts__v1__follow_accepted__init)
                m.pointee.session = accepted.session
                m.pointee.term = accepted.term
                m.pointee.continue_at = accepted.continueAt
                m.pointee.snapshot_first = accepted.snapshotFirst ? 1 : 0
                message.accepted = m
                message.kind_case = RECEIPTS__V1__REPLICATION_MESSAGE__KIND_ACCEPTED
            case .records(let records):
                let m = arena.message(receipts__v1__records__init)
                m.pointee.session = records.session
                m.pointee.term = records.term
                m.pointee.start = records.start
                m.pointee.end = records.end
                m.pointee.acknowledged = records.acknowledged
                m.pointee.primary_end = records.primaryEnd
                message.records = m
                message.kind_case = RECEIPTS__V1__REPLICATION_MESSAGE__KIND_RECORDS
                payload = records.bytes
            case .snapshot(let chunk):
                let m = arena.message(receipts__v1__snapshot_chunk__init)
                m.pointee.session = chunk.session
                m.pointee.position = chunk.position
                m.pointee.file_bytes = chunk.fileBytes
                m.pointee.offset = chunk.offset
                m.pointee.last = chunk.isLast ? 1 : 0
                (m.pointee.n_terms, m.pointee.terms) = TermStart.build(chunk.terms, in: &arena)
                m.pointee.engine_settings = arena.cString(chunk.engineSettings)
                message.snapshot = m
                message.kind_case = RECEIPTS__V1__REPLICATION_MESSAGE__KIND_SNAPSHOT
                payload = chunk.bytes
            case .heartbeat(let heartbeat):
                let m = arena.message(receipts__v1__heartbeat__init)
                m.pointee.session = heartbeat.session
                m.pointee.term = heartbeat.term
                m.pointee.acknowledged = heartbeat.acknowledged
                m.pointee.primary_end = heartbeat.primaryEnd
                m.pointee.primary_durable = heartbeat.primaryDurable
                message.heartbeat = m
                message.kind_case = RECEIPTS__V1__REPLICATION_MESSAGE__KIND_HEARTBEAT
            case .refused(let session, let error):
                let m = arena.message(receipts__v1__follow_refused__init)
                m.pointee.session = session
                m.pointee.error = error.build(in: &arena)
                message.refused = m
                message.kind_case = RECEIPTS__V1__REPLICATION_MESSAGE__KIND_REFUSED
            }
            let body = ProtobufC.pack(
                &message,
                size: receipts__v1__replication_message__get_packed_size,
                pack: receipts__v1__replication_message__pack
            )
            return payload.map { [body, $0] } ?? [body]
        }
    }

    /// Decodes a message from its frames (the DEALER receives no routing frame).
    /// - Throws: `WireError` `.wrongFrameCount` when records or a snapshot chunk come without
    ///   frame 2 or another kind with one; `.frameTooLarge` for a body over
    ///   ``ReplicationFrames/maxBodyBytes``, records over ``ReplicationFrames/maxRecordsBytes``
    ///   or a chunk over ``ReplicationFrames/maxChunkBytes``; `.malformedFrame` for a body that
    ///   is not a `ReplicationMessage`; `.unknownKind` when no kind this build knows is set;
    ///   `.invalidField` for records whose `end - start` is not frame 2's size (or that are
    ///   empty), a chunk that does not fit its file or whose `last` disagrees with its end, and
    ///   a string that is not UTF-8 or holds a NUL.
    public static func decode(_ frames: [[UInt8]]) throws(WireError) -> ReplicationMessage {
        let body = try ReplicationFrames.body(of: frames, allowed: 1...2, name: "ReplicationMessage")
        return try ProtobufC.withBytes(body) { (bytes) throws(WireError) in
            try ProtobufC.unpack(
                bytes,
                as: "ReplicationMessage",
                unpack: receipts__v1__replication_message__unpack
            ) { (message) throws(WireError) in
                try decode(message, frames: frames)
            }
        }
    }

    /// The message of an unpacked body and its frames.
    private static func decode(
        _ message: Receipts__V1__ReplicationMessage,
        frames: [[UInt8]]
    ) throws(WireError) -> ReplicationMessage {
        switch message.kind_case {
        case RECEIPTS__V1__REPLICATION_MESSAGE__KIND_ACCEPTED:
            try ReplicationFrames.noPayload(in: frames, kind: "accepted")
            let m = message.accepted?.pointee
            return .accepted(
                FollowAccepted(
                    session: m?.session ?? 0,
                    term: m?.term ?? 0,
                    continueAt: m?.continue_at ?? 0,
                    snapshotFirst: (m?.snapshot_first ?? 0) != 0
                )
            )
        case RECEIPTS__V1__REPLICATION_MESSAGE__KIND_RECORDS:
            let bytes = try ReplicationFrames.payload(
                of: frames,
                within: ReplicationFrames.maxRecordsBytes,
                kind: "records"
            )
            let m = message.records?.pointee
            let start = m?.start ?? 0
            let end = m?.end ?? 0
            guard !bytes.isEmpty, end >= start, end - start == UInt64(bytes.count) else {
                throw WireError(
                    code: .invalidField,
                    message: "Records: start \(start) and end \(end) do not span frame 2's \(bytes.count) bytes"
                )
            }
            return .records(
                Records(
                    session: m?.session ?? 0,
                    term: m?.term ?? 0,
                    start: start,
                    bytes: bytes,
                    acknowledged: m?.acknowledged ?? 0,
                    primaryEnd: m?.primary_end ?? 0
                )
            )
        case RECEIPTS__V1__REPLICATION_MESSAGE__KIND_SNAPSHOT:
            let bytes = try ReplicationFrames.payload(
                of: frames,
                within: ReplicationFrames.maxChunkBytes,
                kind: "snapshot"
            )
            let m = message.snapshot?.pointee
            let strings = RequestStrings(request: .replication("SnapshotChunk"), invalidUTF8: .refuse)
            let chunk = SnapshotChunk(
                session: m?.session ?? 0,
                position: m?.position ?? 0,
                fileBytes: m?.file_bytes ?? 0,
                offset: m?.offset ?? 0,
                bytes: bytes,
                terms: try TermStart.terms(wire: m?.terms, count: m?.n_terms ?? 0, strings: strings),
                engineSettings: try strings.string(m?.engine_settings, "engine_settings")
            )
            let (end, overflow) = chunk.offset.addingReportingOverflow(UInt64(bytes.count))
            guard !overflow, end <= chunk.fileBytes, chunk.isLast == ((m?.last ?? 0) != 0) else {
                throw WireError(
                    code: .invalidField,
                    message: "SnapshotChunk: \(bytes.count) bytes at offset \(chunk.offset) of a "
                        + "\(chunk.fileBytes)-byte file\((m?.last ?? 0) != 0 ? ", last" : "") do not fit"
                )
            }
            return .snapshot(chunk)
        case RECEIPTS__V1__REPLICATION_MESSAGE__KIND_HEARTBEAT:
            try ReplicationFrames.noPayload(in: frames, kind: "heartbeat")
            let m = message.heartbeat?.pointee
            return .heartbeat(
                Heartbeat(
                    session: m?.session ?? 0,
                    term: m?.term ?? 0,
                    acknowledged: m?.acknowledged ?? 0,
                    primaryEnd: m?.primary_end ?? 0,
                    primaryDurable: m?.primary_durable ?? 0
                )
            )
        case RECEIPTS__V1__REPLICATION_MESSAGE__KIND_REFUSED:
            try ReplicationFrames.noPayload(in: frames, kind: "refused")
            let m = message.refused?.pointee
            let strings = RequestStrings(request: .replication("FollowRefused"), invalidUTF8: .refuse)
            let error =
                if let wire = m?.error?.pointee {
                    try ErrorReply(wire: wire) { (pointer, field) throws(WireError) in
                        try strings.string(pointer, field)
                    }
                } else {
                    ErrorReply(code: .internal, message: "")
                }
            return .refused(session: m?.session ?? 0, error: error)
        default:
            throw WireError(code: .unknownKind, message: "ReplicationMessage has no kind this build knows")
        }
    }
}
