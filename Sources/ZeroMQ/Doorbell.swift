#if canImport(Glibc)
import Glibc
#endif

/// Wakes a `zmq_poll` loop from another thread: a non-blocking pipe whose read end the loop's
/// ``ZMQPoller`` watches (``ZMQPoller/add(fileDescriptor:events:)``).
///
/// A loop that owns sockets cannot be handed work through them from arbitrary threads (sockets
/// belong to one thread), so other threads queue work behind a lock and ring. Ringing is
/// thread-safe and never blocks (a full pipe already means "wake up"); the loop drains it
/// after a wake-up.
public final class Doorbell: Sendable {
    /// The descriptor to poll for readability.
    public let fileDescriptor: Int32
    private let writeDescriptor: Int32

    /// Creates the pipe.
    /// - Throws: ``ZMQError`` with the `pipe` errno if the kernel refuses (too many descriptors).
    public init() throws(ZMQError) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else {
            throw ZMQError(errno: errno, operation: "pipe")
        }
        for descriptor in descriptors {
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        }
        fileDescriptor = descriptors[0]
        writeDescriptor = descriptors[1]
    }

    deinit {
        close(fileDescriptor)
        close(writeDescriptor)
    }

    /// Wakes the loop. Safe from any thread.
    public func ring() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Clears pending rings so the next poll waits again.
    public func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(fileDescriptor, &buffer, buffer.count) > 0 {}
    }
}
