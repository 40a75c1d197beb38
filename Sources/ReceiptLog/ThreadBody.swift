import Glibc

/// The closure a new pthread runs, boxed to pass through `pthread_create`'s context pointer.
final class ThreadBody {
    let name: String
    let run: () -> Void

    /// - Parameters:
    ///   - name: The thread's name in `top -H`, `ps -L` and debuggers (at most 15 bytes).
    ///   - run: What the thread runs, once.
    init(name: String, _ run: @escaping () -> Void) {
        precondition(name.utf8.count <= 15, "a Linux thread name has at most 15 bytes")
        self.name = name
        self.run = run
    }

    /// Starts a plain pthread that runs the body once.
    ///
    /// - Returns: The thread, to join; or the `pthread_create` failure.
    func start() -> Result<pthread_t, SystemCallError> {
        var thread = pthread_t()
        let started = pthread_create(
            &thread,
            nil,
            { context in
                let body = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
                body.nameThisThread()
                body.run()
                return nil
            },
            Unmanaged.passRetained(self).toOpaque()
        )
        guard started == 0 else {
            Unmanaged.passUnretained(self).release()
            return .failure(SystemCallError(call: "pthread_create", errno: started))
        }
        return .success(thread)
    }

    /// Names the calling thread (`pthread_setname_np` is not visible from Swift's Glibc):
    /// best effort, a thread without its name still runs.
    private func nameThisThread() {
        let descriptor = open("/proc/thread-self/comm", O_WRONLY)
        guard descriptor >= 0 else { return }
        _ = name.withCString { write(descriptor, $0, strlen($0)) }
        close(descriptor)
    }
}
