package import Foundation

extension Process {
    /// Polls until the process has exited.
    /// - Parameter seconds: How long to wait at most.
    /// - Returns: false if it still runs after `seconds`.
    package func waitForExit(seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while isRunning {
            if Date() >= deadline { return false }
            usleep(5_000)
        }
        return true
    }

    /// Looks until the process has exited, asleep in between: unlike ``waitForExit(seconds:)``
    /// it holds none of the cooperative pool's threads while the process runs.
    /// - Parameter seconds: How long to wait at most.
    /// - Returns: false if it still runs after `seconds`.
    package func exited(within seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while isRunning {
            if ContinuousClock.now >= deadline { return false }
            // Cancelled: the answer now, rather than a spin until the deadline.
            guard (try? await Task.sleep(for: .milliseconds(5))) != nil else { return !isRunning }
        }
        return true
    }

    /// How the process ended: its exit status, or 128 + the signal number if a signal ended it,
    /// as a shell reports it.
    package var exitStatus: Int32 {
        terminationReason == .exit ? terminationStatus : 128 + terminationStatus
    }

    /// The state letter `/proc/<pid>/stat` gives (`R`, `S`, `D`, `T`, `Z`, ...), or `?`.
    package static func kernelState(of processIdentifier: Int32) -> String {
        guard let stat = try? String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return "?" }
        return String(stat[end...].dropFirst(2).prefix(1))
    }
}

extension Process {
    /// Runs the configured process to its end, its standard output and error going to the file
    /// at `outputPath` (a file, not a pipe, so that a hung child cannot block the read).
    /// - Parameters:
    ///   - outputPath: Where the output goes (created or emptied).
    ///   - input: What its standard input reads, if anything (else it reads end of file).
    ///   - seconds: How long it may run; then it is killed with SIGKILL and this throws.
    /// - Returns: its exit status and its output.
    /// - Throws: `TestKitError` if it cannot start, its output file cannot be made, or it
    ///   outlives `seconds`.
    package func runToEnd(
        outputPath: String,
        input: String? = nil,
        seconds: Double
    ) async throws -> (status: Int32, output: String) {
        guard FileManager.default.createFile(atPath: outputPath, contents: nil),
            let output = FileHandle(forWritingAtPath: outputPath)
        else {
            throw TestKitError(.system, "cannot create \(outputPath)")
        }
        defer { try? output.close() }
        standardOutput = output
        standardError = output
        let inputPipe = Pipe()
        standardInput = inputPipe
        do {
            try runInTurn()
        } catch {
            throw TestKitError(.process, "cannot start \(executableURL?.path ?? "a process")", cause: error)
        }
        if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try? inputPipe.fileHandleForWriting.close()
        guard await exited(within: seconds) else {
            // What the kernel says of it, before the kill: `Z` means it had exited and was not
            // reaped yet (the wait was Foundation's, not the program's).
            let state = Self.kernelState(of: processIdentifier)
            kill(processIdentifier, SIGKILL)
            waitUntilExit()
            let command = ([executableURL?.path ?? ""] + (arguments ?? [])).joined(separator: " ")
            let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            throw TestKitError(
                .timeout,
                "\(command) did not end within \(seconds) s (process state \(state)); its output: \(output.suffix(2000))"
            )
        }
        return (terminationStatus, (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "")
    }
}
