import Glibc

/// Names the calling thread as `top -H`, `ps -L` and debuggers show it (at most 15 bytes).
///
/// Written to `/proc/thread-self/comm` from the thread itself: `pthread_setname_np` is not
/// visible from Swift's Glibc, and Foundation's `Thread.name` reaches the kernel only when the
/// starting thread has recorded the new one first, a race the new thread can win. Best effort:
/// a thread without its name still runs.
public func nameCurrentThread(_ name: String) {
    precondition(name.utf8.count <= 15, "a Linux thread name has at most 15 bytes")
    let descriptor = open("/proc/thread-self/comm", O_WRONLY)
    guard descriptor >= 0 else { return }
    _ = name.withCString { write(descriptor, $0, strlen($0)) }
    close(descriptor)
}
