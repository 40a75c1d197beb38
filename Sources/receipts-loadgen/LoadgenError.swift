/// A failure of the harness itself (a process that would not start, a peer that never answered).
struct LoadgenError: Error, CustomStringConvertible {
    /// What kind of failure.
    enum Code: Sendable {
        case process
        case timeout
        case protocolViolation
        case system
    }

    var code: Code
    var message: String
    var cause: (any Error)?

    init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    var description: String {
        cause.map { "\(message): \($0)" } ?? message
    }
}
