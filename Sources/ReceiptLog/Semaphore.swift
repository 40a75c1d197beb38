import Glibc

/// A counting POSIX semaphore: how the writer thread sleeps until there is work, and how
/// callers of `flush` and blocked appenders sleep until the writer has made progress.
///
/// `@unchecked Sendable`: the `sem_t` lives at a fixed heap address for the object's lifetime
/// and POSIX semaphores are made to be shared between threads.
final class Semaphore: @unchecked Sendable {
    private let handle: UnsafeMutablePointer<sem_t>

    init() {
        self.handle = .allocate(capacity: 1)
        sem_init(self.handle, 0, 0)
    }

    deinit {
        sem_destroy(self.handle)
        self.handle.deallocate()
    }

    func signal() {
        sem_post(self.handle)
    }

    func wait() {
        while sem_wait(self.handle) != 0 && errno == EINTR {}
    }

    /// Waits at most until `deadline` (CLOCK_REALTIME); returns false on timeout.
    func wait(until deadline: timespec) -> Bool {
        var deadline = deadline
        while true {
            if sem_timedwait(self.handle, &deadline) == 0 { return true }
            if errno == EINTR { continue }
            return false
        }
    }
}
