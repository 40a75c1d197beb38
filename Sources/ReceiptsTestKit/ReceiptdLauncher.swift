package import Foundation

/// A `receiptd` child process on a data directory: the one way the tests and the load
/// generator start the daemon.
///
/// The daemon inherits this process's environment without `HOSTNAME` and `RECEIPTD_*` (a CI
/// runner in a pod named `runner-3`, or an exported setting, must not change what is started),
/// then `RECEIPTD_EXIT_WITH_PARENT=1` (a daemon never outlives the test or load generator that
/// started it, even one that crashed or was killed), then the variables asked for. What it
/// writes goes to `receiptd.stderr` in its data directory, appended across restarts.
package final class ReceiptdLauncher {
    /// Where the built binaries are: beside this executable (the test bundle or the load
    /// generator), or `RECEIPTD_BIN_DIR`.
    package static let binaryDirectory: URL = {
        if let directory = ProcessInfo.processInfo.environment["RECEIPTD_BIN_DIR"] {
            return URL(fileURLWithPath: directory)
        }
        return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }()

    /// The daemon's data directory.
    package let dataDirectory: String
    /// The receiptd executable launched.
    package let binary: URL
    /// This build's receiptd, in ``binaryDirectory``.
    package static let thisBuild = binaryDirectory.appendingPathComponent("receiptd")
    /// Whether ``binary`` is this build's receiptd.
    private var isThisBuild: Bool { binary == Self.thisBuild }
    /// The process of the last launch; nil before the first.
    package private(set) var process: Process?

    /// A launcher for a daemon on `dataDirectory`; nothing starts until ``launch(arguments:environment:fileSizeLimitBytes:)``.
    /// - Parameter binary: Another build's receiptd (the load generator's comparisons with an
    ///   earlier commit); nil for the one in ``binaryDirectory``.
    package init(dataDirectory: String, binary: URL? = nil) {
        self.dataDirectory = dataDirectory
        self.binary = binary ?? Self.thisBuild
    }

    deinit {
        kill9()
    }

    /// A `receiptd` process with exactly `arguments`, the environment cleared as the type's
    /// documentation says; not yet run, its output not yet directed (tests that read it
    /// through a pipe set their own).
    /// - Parameters:
    ///   - arguments: receiptd's flags.
    ///   - environment: Variables set on top of the cleared environment.
    ///   - fileSizeLimitBytes: The largest file the daemon may write (`RLIMIT_FSIZE`, with
    ///     `SIGXFSZ` ignored, so a write past it fails with EFBIG: a full disk as far as the log
    ///     can tell); nil for no limit.
    ///   - binary: The executable.
    /// - Returns: The process.
    package static func process(
        arguments: [String],
        environment: [String: String] = [:],
        fileSizeLimitBytes: Int? = nil,
        binary: URL = thisBuild
    ) -> Process {
        let process = Process()
        if let fileSizeLimitBytes {
            // An ignored signal stays ignored across exec; bash's ulimit -f counts KiB.
            process.executableURL = URL(fileURLWithPath: "/bin/bash")
            process.arguments =
                ["-c", #"trap "" XFSZ; ulimit -f \#(fileSizeLimitBytes / 1024); exec "$0" "$@""#, binary.path]
                + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment
            .filter { $0.key != "HOSTNAME" && !$0.key.hasPrefix("RECEIPTD_") }
            .merging(["RECEIPTD_EXIT_WITH_PARENT": "1"]) { $1 }
            .merging(environment) { $1 }
        return process
    }

    /// Starts receiptd (again, after ``kill9()`` or ``terminate()``) on the data directory, with
    /// its HTTP endpoint on a free loopback port so that daemons running side by side never
    /// collide (an `--http` in `arguments` comes later and wins). Another build's receiptd gets
    /// no `--http`: builds before the HTTP endpoint refuse the flag.
    /// - Parameters:
    ///   - arguments: receiptd's flags after `--data-dir` and `--http`.
    ///   - environment: Variables set on top of the cleared environment.
    ///   - fileSizeLimitBytes: The largest file the daemon may write; nil for no limit.
    /// - Returns: Where this launch's output begins in ``standardErrorPath``.
    /// - Throws: `TestKitError` `.process` if the process cannot be started.
    @discardableResult
    package func launch(
        arguments: [String],
        environment: [String: String] = [:],
        fileSizeLimitBytes: Int? = nil
    ) throws -> UInt64 {
        let process = Self.process(
            arguments: ["--data-dir", dataDirectory] + (isThisBuild ? ["--http", "127.0.0.1:0"] : []) + arguments,
            environment: environment,
            fileSizeLimitBytes: fileSizeLimitBytes,
            binary: binary
        )
        if !FileManager.default.fileExists(atPath: standardErrorPath) {
            _ = FileManager.default.createFile(atPath: standardErrorPath, contents: nil)
        }
        guard let log = FileHandle(forWritingAtPath: standardErrorPath) else {
            throw TestKitError(.process, "cannot open \(standardErrorPath)")
        }
        let logStart = log.seekToEndOfFile()
        process.standardError = log
        process.standardOutput = log
        do {
            try process.runInTurn()
        } catch {
            throw TestKitError(.process, "cannot start \(process.executableURL?.path ?? "receiptd")", cause: error)
        }
        self.process = process
        return logStart
    }

    /// The file the daemon's standard output and error go to.
    package var standardErrorPath: String { "\(dataDirectory)/receiptd.stderr" }

    /// What receiptd wrote so far (for failure messages).
    package func standardError() -> String {
        (try? String(contentsOfFile: standardErrorPath, encoding: .utf8)) ?? ""
    }

    /// The daemon process is alive.
    package var isRunning: Bool { process?.isRunning ?? false }

    /// The process id of the last launch; 0 before the first.
    package var processIdentifier: Int32 { process?.processIdentifier ?? 0 }

    /// Sends a signal to the running daemon; nothing if it is not running.
    package func signal(_ signalNumber: Int32) {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, signalNumber)
    }

    /// SIGKILL and wait: nothing gets flushed or closed.
    package func kill9() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM and wait, however long the graceful shutdown takes.
    package func terminate() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}
