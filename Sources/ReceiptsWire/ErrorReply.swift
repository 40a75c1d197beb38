import CReceiptsProto

/// An error reply: why a whole frame or query was refused (`receipts.v1.ErrorReply`).
public struct ErrorReply: Hashable, Sendable {
    /// What kind of error; a struct rather than an enum so codes can grow.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Wrapped: Hashable, Sendable {
            case malformedFrame, unknownKind, frameTooLarge, wrongFrameCount, notFound
            case notOwner, unavailable, invalidArgument, `internal`, permissionDenied, notPrimary
        }

        fileprivate var wrapped: Wrapped

        fileprivate init(_ wrapped: Wrapped) {
            self.wrapped = wrapped
        }

        /// The frame is not a valid protobuf body of the expected type.
        public static let malformedFrame = Code(.malformedFrame)
        /// A query with no known kind.
        public static let unknownKind = Code(.unknownKind)
        /// The frame exceeds the configured maximum size, or the batch the maximum number of events.
        public static let frameTooLarge = Code(.frameTooLarge)
        /// The request did not have the expected number of frames.
        public static let wrongFrameCount = Code(.wrongFrameCount)
        /// No such conversation or message.
        public static let notFound = Code(.notFound)
        /// The conversation belongs to another worker (see `ownerWorker`).
        public static let notOwner = Code(.notOwner)
        /// The worker cannot take the frame now (stopping, its log failed, or the connection has the
        /// maximum number of frames waiting for durability): send it again later.
        public static let unavailable = Code(.unavailable)
        /// A required field is missing or invalid (e.g. an id over the maximum length).
        public static let invalidArgument = Code(.invalidArgument)
        /// Something failed inside the worker.
        public static let `internal` = Code(.internal)
        /// The client's key may not make this request (CurveZMQ on: compact and stats need an operator key).
        public static let permissionDenied = Code(.permissionDenied)
        /// This member does not take writes for its ordinal (a standby, or its lease is gone): see
        /// `primary` and `term`. Nothing of the frame was applied (deploy/REPLICATION.md section 8.1).
        public static let notPrimary = Code(.notPrimary)

        public var description: String {
            switch wrapped {
            case .malformedFrame: "malformed_frame"
            case .unknownKind: "unknown_kind"
            case .frameTooLarge: "frame_too_large"
            case .wrongFrameCount: "wrong_frame_count"
            case .notFound: "not_found"
            case .notOwner: "not_owner"
            case .unavailable: "unavailable"
            case .invalidArgument: "invalid_argument"
            case .internal: "internal"
            case .permissionDenied: "permission_denied"
            case .notPrimary: "not_primary"
            }
        }
    }

    /// The primary a `.notPrimary` answer names: its member name and advertised endpoints.
    public struct Primary: Hashable, Sendable {
        /// The primary's member name, e.g. "receiptd-b-3".
        public var member: String
        /// Its advertised ingest endpoint; empty if not known.
        public var ingest: String
        /// Its advertised query endpoint; empty if not known.
        public var query: String
        /// Its advertised status update endpoint; empty if not known.
        public var publish: String

        /// Creates a primary's address.
        /// - Parameters:
        ///   - member: The primary's member name (not empty: an unknown primary is no `Primary`).
        ///   - ingest: Its advertised ingest endpoint.
        ///   - query: Its advertised query endpoint.
        ///   - publish: Its advertised status update endpoint.
        public init(member: String, ingest: String = "", query: String = "", publish: String = "") {
            self.member = member
            self.ingest = ingest
            self.query = query
            self.publish = publish
        }
    }

    /// What kind of error.
    public var code: Code
    /// Human-readable explanation.
    public var message: String
    /// With `.notOwner`: the worker that owns the conversation (ignored with other codes,
    /// since the wire field is only meaningful with NOT_OWNER and worker 0 is valid).
    public var ownerWorker: Int?
    /// With `.notPrimary`: the primary, nil while an election is under way (ignored with other
    /// codes, like `ownerWorker`).
    public var primary: Primary?
    /// With `.notPrimary`: the term the answer is about (0 with other codes).
    public var term: UInt64

    /// Creates an error reply.
    /// - Parameters:
    ///   - code: What kind of error.
    ///   - message: Human-readable explanation.
    ///   - ownerWorker: With `.notOwner`, the worker that owns the conversation.
    ///   - primary: With `.notPrimary`, the primary if known.
    ///   - term: With `.notPrimary`, the term the answer is about.
    public init(code: Code, message: String, ownerWorker: Int? = nil, primary: Primary? = nil, term: UInt64 = 0) {
        self.code = code
        self.message = message
        self.ownerWorker = ownerWorker
        self.primary = primary
        self.term = term
    }

    /// The reply for a frame that failed to decode (or was refused before decoding), so the
    /// service answers every `WireError` the same way.
    public init(_ error: WireError) {
        let code: Code =
            switch error.code {
            case .malformedFrame: .malformedFrame
            case .frameTooLarge: .frameTooLarge
            case .unknownKind: .unknownKind
            case .wrongFrameCount: .wrongFrameCount
            default: .invalidArgument
            }
        self.init(code: code, message: error.message)
    }
}

extension ErrorReply {
    /// The reply from the wire. UNSPECIFIED and codes from a newer peer read as `.internal`
    /// (the message still says what happened).
    init(wire reply: Receipts__V1__ErrorReply) {
        self.init(wire: reply) { pointer, _ in String(wire: pointer) }
    }

    /// The reply from the wire, its strings read by `string` (a ``RequestStrings`` reader where
    /// they must be valid: in a replication message).
    init<Failure: Error>(
        wire reply: Receipts__V1__ErrorReply,
        string: (UnsafePointer<CChar>?, StaticString) throws(Failure) -> String
    ) throws(Failure) {
        let code: Code =
            switch reply.code {
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_MALFORMED_FRAME: .malformedFrame
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_UNKNOWN_KIND: .unknownKind
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_FRAME_TOO_LARGE: .frameTooLarge
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_WRONG_FRAME_COUNT: .wrongFrameCount
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_NOT_FOUND: .notFound
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_NOT_OWNER: .notOwner
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_UNAVAILABLE: .unavailable
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_INVALID_ARGUMENT: .invalidArgument
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_PERMISSION_DENIED: .permissionDenied
            case RECEIPTS__V1__ERROR_CODE__ERROR_CODE_NOT_PRIMARY: .notPrimary
            default: .internal
            }
        var primary: Primary?
        if code == .notPrimary {
            let member = try string(reply.primary_member, "error.primary_member")
            if !member.isEmpty {
                primary = Primary(
                    member: member,
                    ingest: try string(reply.primary_ingest, "error.primary_ingest"),
                    query: try string(reply.primary_query, "error.primary_query"),
                    publish: try string(reply.primary_publish, "error.primary_publish")
                )
            }
        }
        self.init(
            code: code,
            message: try string(reply.message, "error.message"),
            ownerWorker: code == .notOwner ? Int(reply.owner_worker) : nil,
            primary: primary,
            term: code == .notPrimary ? reply.term : 0
        )
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__ErrorReply> {
        let reply = arena.message(receipts__v1__error_reply__init)
        reply.pointee.code =
            switch code.wrapped {
            case .malformedFrame: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_MALFORMED_FRAME
            case .unknownKind: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_UNKNOWN_KIND
            case .frameTooLarge: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_FRAME_TOO_LARGE
            case .wrongFrameCount: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_WRONG_FRAME_COUNT
            case .notFound: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_NOT_FOUND
            case .notOwner: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_NOT_OWNER
            case .unavailable: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_UNAVAILABLE
            case .invalidArgument: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_INVALID_ARGUMENT
            case .internal: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_INTERNAL
            case .permissionDenied: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_PERMISSION_DENIED
            case .notPrimary: RECEIPTS__V1__ERROR_CODE__ERROR_CODE_NOT_PRIMARY
            }
        reply.pointee.message = arena.cString(message)
        reply.pointee.owner_worker = code == .notOwner ? UInt32(clamping: ownerWorker ?? 0) : 0
        if code == .notPrimary {
            if let primary {
                reply.pointee.primary_member = arena.cString(primary.member)
                reply.pointee.primary_ingest = arena.cString(primary.ingest)
                reply.pointee.primary_query = arena.cString(primary.query)
                reply.pointee.primary_publish = arena.cString(primary.publish)
            }
            reply.pointee.term = term
        }
        return reply
    }
}
