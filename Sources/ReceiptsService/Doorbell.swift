#if canImport(Glibc)
import Glibc
#endif

/// Wakes the service loop from another thread: a non-blocking pipe whose read end
/// `zmq_poll` watches.
///
/// The log's writer thread rings it when a batch becomes durable; the signal handler and
/// the compaction thread ring it when they have something for the loop. Ringing is
/// thread-safe and never blocks (a full pipe already means "wake up"); the loop drains it
/// after a wake-up.
final class Doorbell: Sendable {
    /// The descriptor to poll for readability.
    let fileDescriptor: Int32
    private let writeDescriptor: Int32

    /// Creates the pipe.
    /// - Throws: `ServiceError` with code `.system` if the kernel refuses.
    init() throws(ServiceError) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else {
            throw ServiceError(.system, "pipe failed: \(String(cString: strerror(errno)))")
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
    func ring() {
        var byte: UInt8 = 1
        _ = write(writeDescriptor, &byte, 1)
    }

    /// Clears pending rings so the next poll waits again.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 256)
        while read(fileDescriptor, &buffer, buffer.count) > 0 {}
    }
}
