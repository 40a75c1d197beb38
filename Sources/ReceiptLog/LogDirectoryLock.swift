import Glibc
import Synchronization

/// The exclusive hold of a log directory by one open log (or one seed, emptying or truncation),
/// so that two processes, or two opens in one, never write the same log.
///
/// The hold is a POSIX record lock on the directory's LOCK file, which other processes see and
/// the kernel drops when the process dies, together with a set of the directories this process
/// holds, because record locks never conflict within one process. A record lock belongs to the
/// process and no child inherits it. An `flock` would conflict within the process too, but it
/// belongs to the open file, which a child shares from its fork to its exec: a log closed and
/// opened again while its process starts a child (a gateway spawning a helper) found its own
/// lock still held, and was refused.
final class LogDirectoryLock: Sendable {
    /// The directories this process holds, by device and inode.
    private static let held = Mutex<Set<DirectoryIdentity>>([])

    private struct DirectoryIdentity: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private let identity: DirectoryIdentity
    private let descriptor: Mutex<Int32?>

    private init(identity: DirectoryIdentity, descriptor: Int32) {
        self.identity = identity
        self.descriptor = Mutex(descriptor)
    }

    /// Takes the directory, which must exist.
    ///
    /// - Throws: ``LogError`` `.locked` when this process or another holds it, `.io` otherwise.
    static func acquire(_ directory: String) throws(LogError) -> LogDirectoryLock {
        let path = directory + "/" + LogFileName.lock
        // The directory's identity and its LOCK file through one descriptor of it, so that a
        // directory swapped for another between the two cannot hold one key and lock another.
        let directoryDescriptor = try FileIO.open(directory, O_RDONLY | O_DIRECTORY)
        defer { FileIO.close(directoryDescriptor) }
        var status = stat()
        guard fstat(directoryDescriptor, &status) == 0 else {
            throw LogError(
                code: .io,
                message: "cannot stat the log directory",
                cause: SystemCallError(call: "fstat", errno: errno),
                file: directory
            )
        }
        let identity = DirectoryIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        // The set is held while the LOCK file is opened: closing any descriptor of that file drops
        // the process's record lock, so it is never opened while this process holds it.
        return try Self.held.withLock { held throws(LogError) in
            guard !held.contains(identity) else { throw Self.inUse(path) }
            let fd = openat(directoryDescriptor, LogFileName.lock, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw LogError(
                    code: .io,
                    message: "cannot open the log directory's lock file",
                    cause: SystemCallError(call: "openat", errno: errno),
                    file: path
                )
            }
            var range = flock()
            range.l_type = Int16(F_WRLCK)
            range.l_whence = Int16(SEEK_SET)
            while fcntl(fd, F_SETLK, &range) != 0 {
                let error = errno
                if error == EINTR { continue }
                FileIO.close(fd)
                if error == EAGAIN || error == EACCES { throw Self.inUse(path) }
                throw LogError(
                    code: .io,
                    message: "cannot lock the log directory",
                    cause: SystemCallError(call: "fcntl", errno: error),
                    file: path
                )
            }
            held.insert(identity)
            return LogDirectoryLock(identity: identity, descriptor: fd)
        }
    }

    /// Lets the directory go; later calls do nothing.
    func release() {
        Self.held.withLock { held in
            guard let fd = self.descriptor.withLock({ descriptor in descriptor.take() }) else { return }
            FileIO.close(fd)
            held.remove(self.identity)
        }
    }

    private static func inUse(_ path: String) -> LogError {
        LogError(code: .locked, message: "the log directory is in use by another open log", file: path)
    }
}
