/// An error that stops the service from starting or running.
public struct ServiceError: Error, CustomStringConvertible {
    /// What kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String { case configuration, system, storage, transport, recovery }
        private let value: Value
        /// A flag or setting is invalid.
        public static let configuration = Code(value: .configuration)
        /// The operating system refused a resource.
        public static let system = Code(value: .system)
        /// The log failed.
        public static let storage = Code(value: .storage)
        /// A socket could not be set up.
        public static let transport = Code(value: .transport)
        /// The state could not be recovered from the log.
        public static let recovery = Code(value: .recovery)
        /// The code's name, e.g. "storage".
        public var description: String { value.rawValue }
    }

    /// What kind of failure.
    public var code: Code
    /// What went wrong, for the operator.
    public var message: String
    /// The underlying error, if any.
    public var cause: (any Error)?

    /// Creates an error with its code, an operator-facing message and the underlying error.
    public init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// "code: message (cause)", for logs and the command line.
    public var description: String {
        if let cause { return "\(code): \(message) (\(cause))" }
        return "\(code): \(message)"
    }
}
