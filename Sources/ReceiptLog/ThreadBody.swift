import Glibc

/// The closure a new pthread runs, boxed to pass through `pthread_create`'s context pointer.
final class ThreadBody {
    let name: String
    let run: () -> Void

    /// - Parameters:
    ///   - name: The thread's name in `top -H`, `ps -L` and debuggers (at most 15 bytes).
    ///   - run: What the thread runs, once.
    init(name: String, _ run: @escaping () -> Void) {
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
                nameCurrentThread(body.name)
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
}
