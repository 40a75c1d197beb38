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
    /// - Parameter stackBytes: The thread's stack size; nil for the system's default.
    /// - Returns: The thread, to join or detach; or the `pthread_create` failure.
    func start(stackBytes: Int? = nil) -> Result<pthread_t, SystemCallError> {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackBytes {
            let set = pthread_attr_setstacksize(&attributes, stackBytes)
            guard set == 0 else { return .failure(SystemCallError(call: "pthread_attr_setstacksize", errno: set)) }
        }
        var thread = pthread_t()
        let started = pthread_create(
            &thread,
            &attributes,
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
