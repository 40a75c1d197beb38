import Foundation
import Glibc
import Testing

@testable import ReceiptLog

/// Who may hold a log directory: one open log of one process, whatever path it is opened by,
/// and never a child process that has a copy of the LOCK file's descriptor.
struct DirectoryLockTests {
    @Test func aSecondOpenByAnotherPathIsRefused() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let link = fixture.directory + "-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: fixture.directory)
        let error = #expect(throws: LogError.self) {
            try OpenLog(configuration: LogConfiguration(directory: link), logger: fixture.logs.logger)
        }
        #expect(error?.code == .locked)
        #expect(error?.message.contains("in use") == true)
        try log.log.close()
        try OpenLog(configuration: LogConfiguration(directory: link), logger: fixture.logs.logger).log.close()
    }

    /// Every child process has a copy of every descriptor from its fork to its exec, where
    /// O_CLOEXEC closes them; the child here keeps its copy of the LOCK descriptor for as long as
    /// it runs. The log's own process closes the log and opens it again in the meantime, as a
    /// gateway that starts a helper might.
    @Test func aChildWithACopyOfTheLockDescriptorDoesNotHoldTheLog() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let child = try Self.sleeper(holding: try Self.descriptor(of: fixture.path(LogFileName.lock)))
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        try log.log.close()
        let reopened = try fixture.open()
        _ = try reopened.append(1)
        try reopened.log.close()
        #expect(kill(child, 0) == 0, "the child still runs and still has the descriptor")
    }

    @Test func truncatingOrEmptyingAnOpenLogIsRefused() throws {
        let fixture = try LogFixture()
        let log = try fixture.open()
        let error = #expect(throws: LogError.self) { try ReceiptLog.empty(directory: fixture.directory) }
        #expect(error?.code == .locked)
        try log.log.close()
        try ReceiptLog.empty(directory: fixture.directory)
        try fixture.open().log.close()
    }

    /// This process's descriptor of `path`, found in /proc/self/fd.
    private static func descriptor(of path: String) throws -> Int32 {
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        for name in descriptors {
            guard let fd = Int32(name),
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")
            else { continue }
            if target == path { return fd }
        }
        throw POSIXError(.ENOENT)
    }

    /// Starts `sleep 30` with a copy of `descriptor` as its descriptor 100.
    private static func sleeper(holding descriptor: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, descriptor, 100)
        var pid: pid_t = 0
        let arguments = ["/bin/sleep", "30"].map { (argument: String) in strdup(argument) } + [nil]
        defer { for argument in arguments { free(argument) } }
        let result = posix_spawn(&pid, "/bin/sleep", &actions, nil, arguments, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO) }
        return pid
    }
}
