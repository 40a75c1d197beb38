import Glibc

/// A failed system call and its `errno`, used as the ``LogError/cause``.
public struct SystemCallError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The name of the call that failed, e.g. `"fdatasync"`.
    public var call: String
    /// The `errno` it set.
    public var errno: Int32

    /// Creates an error for a call and its `errno`.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(self.call): \(String(cString: strerror(self.errno))) (errno \(self.errno))"
    }
}
