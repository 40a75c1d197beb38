import Foundation
import ReceiptsTestKit

/// A baseline's receiver in a process of its own, as receiptd runs in one: this executable
/// started again with its hidden `sink` subcommand on `ipc://` endpoints in a
/// fresh temporary directory, speaking a line protocol on its standard output ("ready",
/// then whatever the subcommand reports).
///
/// Stopped with SIGKILL when released: a baseline's receiver holds no state worth a clean exit.
final class SinkProcess {
    /// The temporary directory holding the receiver's endpoints (removed when released).
    let directory: String
    private let process = Process()
    private let lines: LineReader
    private var launched = false

    /// Starts `receipts-loadgen <arguments>` and waits for its "ready" line.
    /// - Parameters:
    ///   - prefix: The temporary directory's name prefix.
    ///   - arguments: The subcommand and its flags, given the directory (for `endpoint(_:)`).
    /// - Throws: `LoadgenError` if the receiver does not start.
    init(prefix: String, arguments: (SinkProcess) -> [String]) throws {
        directory = try TemporaryDirectory.make(prefix: prefix)
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let output = Pipe()
        process.standardOutput = output
        lines = LineReader(output.fileHandleForReading)
        process.arguments = arguments(self)
        try process.run()
        launched = true
        guard lines.next() == "ready" else { throw LoadgenError(.process, "baseline receiver did not start") }
    }

    deinit {
        if launched {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// An `ipc://` endpoint in the receiver's directory (short, under the ~100-byte path limit).
    func endpoint(_ name: String) -> String {
        "ipc://\(directory)/\(name).sock"
    }

    /// The receiver's next line of output.
    /// - Parameter prefix: What the line must start with.
    /// - Throws: `LoadgenError` if the receiver exited or said something else.
    func expectLine(startingWith prefix: String) throws -> String {
        guard let line = lines.next(), line.hasPrefix(prefix) else {
            throw LoadgenError(.process, "baseline receiver did not report '\(prefix)'")
        }
        return line
    }
}
