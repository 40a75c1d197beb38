import Foundation
import Logging

/// `--exit-with-parent`: a thread that ends the process when its parent is gone.
///
/// A child whose parent dies is handed to another process (init, or a subreaper), so its parent
/// id changes; the thread looks five times a second. It does not use `PR_SET_PDEATHSIG`, which
/// fires when the parent *thread* that started the child ends, and a test process's threads
/// come and go while the process lives on.
enum ParentWatch {
    /// The exit status when the parent is gone (`EX_SOFTWARE`: the process was not asked to
    /// stop; its caller vanished).
    static let exitStatus: Int32 = 70

    /// Starts the thread, which exits the process with ``exitStatus`` (nothing is drained: the
    /// log keeps every acknowledged batch, as after a kill).
    static func start(logger: Logger) {
        let parent = getppid()
        let thread = Thread {
            while getppid() == parent { usleep(200_000) }
            logger.critical("the process that started receiptd is gone; exiting (--exit-with-parent)")
            _exit(exitStatus)
        }
        thread.name = "parent-watch"
        thread.start()
    }
}
