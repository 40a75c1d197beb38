import CReceiptsProto

/// What a standby says to the primary on the replication endpoint
/// (`receipts.v1.ReplicationRequest`, deploy/REPLICATION.md section 4.3): one frame.
public enum ReplicationRequest: Hashable, Sendable {
    /// Opens a session: who the standby is and where its log stands.
    case follow(Follow)
    /// What the standby has appended, made durable and applied.
    case ack(Ack)

    /// A standby's opening of a session (`receipts.v1.Follow`).
    public struct Follow: Hashable, Sendable {
        /// Random per session; every message of the session echoes it.
        public var session: UInt64
        /// The standby's member name.
        public var member: String
        /// The ordinal it serves.
        public var workerIndex: Int
        /// The highest term it has seen (its log or etcd).
        public var knownTerm: UInt64
        /// Its whole term history, oldest first.
        public var terms: [TermStart]
        /// Its appended end.
        public var logEnd: UInt64
        /// Its durable end.
        public var durable: UInt64
        /// The text of its engine-settings file; empty for a new member.
        public var engineSettings: String
        /// Flow control: the primary sends up to the last acknowledged `appended` plus this.
        public var windowBytes: UInt64

        /// Creates a session's opening.
        /// - Parameters:
        ///   - session: Random per session.
        ///   - member: The standby's member name.
        ///   - workerIndex: The ordinal it serves (clamped into `uint32` on the wire).
        ///   - knownTerm: The highest term it has seen.
        ///   - terms: Its term history, oldest first.
        ///   - logEnd: Its appended end.
        ///   - durable: Its durable end.
        ///   - engineSettings: Its engine-settings text.
        ///   - windowBytes: Its flow control window.
        public init(
            session: UInt64,
            member: String,
            workerIndex: Int,
            knownTerm: UInt64,
            terms: [TermStart],
            logEnd: UInt64,
            durable: UInt64,
            engineSettings: String,
            windowBytes: UInt64
        ) {
            self.session = session
            self.member = member
            self.workerIndex = workerIndex
            self.knownTerm = knownTerm
            self.terms = terms
            self.logEnd = logEnd
            self.durable = durable
            self.engineSettings = engineSettings
            self.windowBytes = windowBytes
        }
    }

    /// A standby's positions (`receipts.v1.ReplicationAck`).
    public struct Ack: Hashable, Sendable {
        /// The session, as in its `Follow`.
        public var session: UInt64
        /// Handed to its log: the primary may send up to this plus the window.
        public var appended: UInt64
        /// Fsynced under its fsync policy: what the primary's frontier counts.
        public var durable: UInt64
        /// Applied to its engine.
        public var applied: UInt64

        /// Creates an acknowledgement.
        /// - Parameters:
        ///   - session: The session.
        ///   - appended: Its appended end.
        ///   - durable: Its durable end.
        ///   - applied: Its applied position.
        public init(session: UInt64, appended: UInt64, durable: UInt64, applied: UInt64) {
            self.session = session
            self.appended = appended
            self.durable = durable
            self.applied = applied
        }
    }

    /// The request as its frames (always one).
    public func encode() -> [[UInt8]] {
        let expected = if case .follow(let follow) = self { 256 + follow.engineSettings.utf8.count } else { 64 }
        return Arena.with(expectedBytes: expected) { arena in
            var request = Receipts__V1__ReplicationRequest()
            receipts__v1__replication_request__init(&request)
            switch self {
            case .follow(let follow):
                let m = arena.message(receipts__v1__follow__init)
                m.pointee.session = follow.session
                m.pointee.member = arena.cString(follow.member)
                m.pointee.worker_index = UInt32(clamping: follow.workerIndex)
                m.pointee.known_term = follow.knownTerm
                (m.pointee.n_terms, m.pointee.terms) = TermStart.build(follow.terms, in: &arena)
                m.pointee.log_end = follow.logEnd
                m.pointee.durable = follow.durable
                m.pointee.engine_settings = arena.cString(follow.engineSettings)
                m.pointee.window_bytes = follow.windowBytes
                request.follow = m
                request.kind_case = RECEIPTS__V1__REPLICATION_REQUEST__KIND_FOLLOW
            case .ack(let ack):
                let m = arena.message(receipts__v1__replication_ack__init)
                m.pointee.session = ack.session
                m.pointee.appended = ack.appended
                m.pointee.durable = ack.durable
                m.pointee.applied = ack.applied
                request.ack = m
                request.kind_case = RECEIPTS__V1__REPLICATION_REQUEST__KIND_ACK
            }
            return [
                ProtobufC.pack(
                    &request,
                    size: receipts__v1__replication_request__get_packed_size,
                    pack: receipts__v1__replication_request__pack
                )
            ]
        }
    }

    /// Decodes a request from its frames (the ROUTER's routing frame removed).
    /// - Throws: `WireError` `.wrongFrameCount` unless there is exactly one frame,
    ///   `.frameTooLarge` over ``ReplicationFrames/maxBodyBytes``, `.malformedFrame` for bytes
    ///   that are not a `ReplicationRequest`, `.unknownKind` when no kind this build knows is
    ///   set, `.invalidField` naming a string that is not UTF-8 or holds a NUL (`Follow: member
    ///   holds a NUL byte`), as in a query.
    public static func decode(_ frames: [[UInt8]]) throws(WireError) -> ReplicationRequest {
        let body = try ReplicationFrames.body(of: frames, allowed: 1...1, name: "ReplicationRequest")
        return try ProtobufC.withBytes(body) { (bytes) throws(WireError) in
            try ProtobufC.unpack(
                bytes,
                as: "ReplicationRequest",
                unpack: receipts__v1__replication_request__unpack
            ) { (request) throws(WireError) in
                switch request.kind_case {
                case RECEIPTS__V1__REPLICATION_REQUEST__KIND_FOLLOW:
                    let strings = RequestStrings(request: .replication("Follow"), invalidUTF8: .refuse)
                    let m = request.follow?.pointee
                    return .follow(
                        Follow(
                            session: m?.session ?? 0,
                            member: try strings.string(m?.member, "member"),
                            workerIndex: Int(m?.worker_index ?? 0),
                            knownTerm: m?.known_term ?? 0,
                            terms: try TermStart.terms(wire: m?.terms, count: m?.n_terms ?? 0, strings: strings),
                            logEnd: m?.log_end ?? 0,
                            durable: m?.durable ?? 0,
                            engineSettings: try strings.string(m?.engine_settings, "engine_settings"),
                            windowBytes: m?.window_bytes ?? 0
                        )
                    )
                case RECEIPTS__V1__REPLICATION_REQUEST__KIND_ACK:
                    let m = request.ack?.pointee
                    return .ack(
                        Ack(
                            session: m?.session ?? 0,
                            appended: m?.appended ?? 0,
                            durable: m?.durable ?? 0,
                            applied: m?.applied ?? 0
                        )
                    )
                default:
                    throw WireError(code: .unknownKind, message: "ReplicationRequest has no kind this build knows")
                }
            }
        }
    }
}
