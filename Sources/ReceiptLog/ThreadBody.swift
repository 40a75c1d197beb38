import Glibc

/// The closure a new pthread runs, boxed to pass through `pthread_create`'s context pointer.
final class ThreadBody {
    let run: () -> Void

    init(_ run: @escaping () -> Void) {
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
                Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue().run()
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
