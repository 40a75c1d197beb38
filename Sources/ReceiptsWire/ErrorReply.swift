import CReceiptsProto

/// An error reply: why a whole frame or query was refused (`receipts.v1.ErrorReply`).
public struct ErrorReply: Hashable, Sendable {
    /// What kind of error; a struct rather than an enum so codes can grow.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Wrapped: Hashable, Sendable {
            case malformedFrame, unknownKind, frameTooLarge, wrongFrameCount, notFound
            case notOwner, unavailable, invalidArgument, `internal`, permissionDenied
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
            }
        }
    }

    /// What kind of error.
    public var code: Code
    /// Human-readable explanation.
    public var message: String
    /// With `.notOwner`: the worker that owns the conversation (ignored with other codes,
    /// since the wire field is only meaningful with NOT_OWNER and worker 0 is valid).
    public var ownerWorker: Int?

    /// Creates an error reply.
    /// - Parameters:
    ///   - code: What kind of error.
    ///   - message: Human-readable explanation.
    ///   - ownerWorker: With `.notOwner`, the worker that owns the conversation.
    public init(code: Code, message: String, ownerWorker: Int? = nil) {
        self.code = code
        self.message = message
        self.ownerWorker = ownerWorker
    }

    /// The reply for a frame that failed to decode (or was refused before decoding), so the
    /// service answers every `WireError` the same way.
    public init(_ error: WireError) {
        let code: Code =
            switch error.code {
            case .malformedFrame: .malformedFrame
            case .frameTooLarge: .frameTooLarge
            case .unknownKind: .unknownKind
            default: .invalidArgument
            }
        self.init(code: code, message: error.message)
    }
}

extension ErrorReply {
    /// The reply from the wire. UNSPECIFIED and codes from a newer peer read as `.internal`
    /// (the message still says what happened).
    init(wire reply: Receipts__V1__ErrorReply) {
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
            default: .internal
            }
        self.init(
            code: code,
            message: String(wire: reply.message),
            ownerWorker: code == .notOwner ? Int(reply.owner_worker) : nil
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
            }
        reply.pointee.message = arena.cString(message)
        reply.pointee.owner_worker = code == .notOwner ? UInt32(clamping: ownerWorker ?? 0) : 0
        return reply
    }
}
