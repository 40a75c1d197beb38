/// A failure of the test kit itself: a daemon that would not start, a bridged call that did
/// not finish in time.
package struct TestKitError: Error, CustomStringConvertible {
    /// What kind of failure.
    package enum Code: Sendable {
        /// A child process could not be started.
        case process
        /// Something did not happen within its deadline.
        case timeout
        /// A system call failed.
        case system
    }

    package var code: Code
    package var message: String
    package var cause: (any Error)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: What kind of failure.
    ///   - message: What failed, for a person.
    ///   - cause: The underlying error, if any.
    package init(_ code: Code, _ message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    package var description: String {
        cause.map { "\(message): \($0)" } ?? message
    }
}
