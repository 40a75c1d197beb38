/// Every error `ReceiptsClient` throws.
///
/// A struct with an extensible ``Code`` rather than an enum, so codes can grow without breaking
/// callers' exhaustive switches (the shape of grpc-swift's `RuntimeError`).
public struct ReceiptsClientError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String {
            case timeout
            case notOwner = "not_owner"
            case rejected, unavailable
            case notFound = "not_found"
            case malformedReply = "malformed_reply"
            case invalidArgument = "invalid_argument"
            case permissionDenied = "permission_denied"
            case closed, cancelled, transport
        }
        private let value: Value
        /// No reply within the configured time (queries; sends retry instead of failing).
        public static let timeout = Code(value: .timeout)
        /// The worker asked does not own the conversation: the client's worker count disagrees
        /// with the cluster's (see ``ReceiptsClientError/ownerWorker``).
        public static let notOwner = Code(value: .notOwner)
        /// The worker refused the request itself (an invalid or oversized frame or query).
        public static let rejected = Code(value: .rejected)
        /// The worker is stopping or could not log; try again later.
        public static let unavailable = Code(value: .unavailable)
        /// No such conversation or message.
        public static let notFound = Code(value: .notFound)
        /// A reply that is not what the protocol allows (undecodable, wrong kind, wrong length).
        public static let malformedReply = Code(value: .malformedReply)
        /// The call's arguments or the client's configuration cannot work.
        public static let invalidArgument = Code(value: .invalidArgument)
        /// The client's CURVE key may not make this request (compact and stats need an operator key).
        public static let permissionDenied = Code(value: .permissionDenied)
        /// The client was shut down.
        public static let closed = Code(value: .closed)
        /// The calling task was cancelled before the answer came.
        public static let cancelled = Code(value: .cancelled)
        /// A socket, pipe or file could not be set up.
        public static let transport = Code(value: .transport)
        /// The code's name, e.g. "not_owner".
        public var description: String { value.rawValue }
    }

    /// What kind of failure.
    public var code: Code
    /// What exactly went wrong, for logs.
    public var message: String
    /// With ``Code/notOwner``: the worker that owns the conversation, as the worker said.
    public var ownerWorker: Int?
    /// The underlying error, if any.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: What kind of failure.
    ///   - message: What exactly went wrong.
    ///   - ownerWorker: With `.notOwner`, the owning worker.
    ///   - cause: The underlying error.
    public init(_ code: Code, _ message: String, ownerWorker: Int? = nil, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.ownerWorker = ownerWorker
        self.cause = cause
    }

    /// "code: message (cause)".
    public var description: String {
        if let cause { return "\(code): \(message) (\(cause))" }
        return "\(code): \(message)"
    }
}
