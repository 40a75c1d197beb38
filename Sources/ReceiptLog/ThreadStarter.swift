package import Glibc

/// How the log's and the worker's long-lived helper threads are started: with `pthread_create`,
/// so that a thread the system refuses (EAGAIN: out of threads, memory or the cgroup's pids)
/// is an error its caller reports and handles, where Foundation's `Thread.start()` has no way
/// to fail.
///
/// The seam for tests of those failure paths is ``failing(_:)``: it makes `pthread_create`
/// itself fail for the named threads only, with the errno a real shortage gives, and starts
/// every other thread as ``standard`` does.
package struct ThreadStarter: Sendable {
    /// A stack no address space can hold (1 EiB): `pthread_create` cannot map it and fails
    /// with EAGAIN.
    private static let unmappableStackBytes = 1 << 60

    /// The names of the threads whose start fails.
    private let failingNames: Set<String>

    /// Starts every thread with the system's defaults.
    package static let standard = ThreadStarter(failingNames: [])

    private init(failingNames: Set<String>) {
        self.failingNames = failingNames
    }

    /// A starter for tests whose starts of the named threads fail in `pthread_create`, for
    /// real: they ask for a stack larger than any address space.
    ///
    /// - Parameter names: Thread names, as passed to ``start(_:stackBytes:_:)``.
    package static func failing(_ names: Set<String>) -> ThreadStarter {
        ThreadStarter(failingNames: names)
    }

    /// Starts a thread that runs `run` once, for the caller to join.
    ///
    /// - Parameters:
    ///   - name: The thread's name in `top -H`, `ps -L` and debuggers (at most 15 bytes).
    ///   - stackBytes: The thread's stack size; nil for the system's default.
    ///   - run: What the thread runs.
    /// - Returns: The thread; or why it could not be started.
    package func start(
        _ name: String,
        stackBytes: Int? = nil,
        _ run: @escaping @Sendable () -> Void
    ) -> Result<pthread_t, SystemCallError> {
        ThreadBody(name: name, run).start(
            stackBytes: failingNames.contains(name) ? Self.unmappableStackBytes : stackBytes
        )
    }

    /// Starts a thread that runs `run` once and that nobody joins: the system reclaims it when
    /// it ends.
    ///
    /// - Parameters:
    ///   - name: The thread's name (at most 15 bytes).
    ///   - stackBytes: The thread's stack size; nil for the system's default.
    ///   - run: What the thread runs.
    /// - Returns: Why the thread could not be started, if it could not.
    package func startDetached(
        _ name: String,
        stackBytes: Int? = nil,
        _ run: @escaping @Sendable () -> Void
    ) -> Result<Void, SystemCallError> {
        start(name, stackBytes: stackBytes, run).map { thread in
            pthread_detach(thread)
            return ()
        }
    }
}
