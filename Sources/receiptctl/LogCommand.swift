import ArgumentParser
import ReceiptLog
import ReceiptsWire

/// Operator commands on a data directory's log.
struct LogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Inspect or compact receiptd's log.",
        subcommands: [Verify.self, Compact.self]
    )

    /// Reads the whole log and snapshots without changing anything (safe on a live directory).
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check every segment and snapshot; exit 1 if start-up would refuse the log."
        )
        @OptionGroup var endpoints: Endpoints

        func run() throws {
            let report = try ReceiptLog.verify(directory: endpoints.dataDirectory)
            print(
                "segments \(report.segments), records \(report.records), bytes \(report.bytes), end position \(report.endPosition.offset)"
            )
            for snapshot in report.snapshots {
                print(
                    "snapshot \(snapshot.file) at \(snapshot.position.offset): \(snapshot.bytes) bytes, \(snapshot.isValid ? "valid" : "INVALID")"
                )
            }
            print(
                "recovery starts from \(report.recoverySnapshot.map { "snapshot at \($0.offset)" } ?? "the first segment") and replays \(report.recordsToReplay) records"
            )
            for file in report.temporaryFiles { print("leftover temporary file \(file) (removed at start-up)") }
            guard let problem = report.problem else {
                print(report.isClean ? "clean" : "start-up will tidy up (see above)")
                return
            }
            print("problem: \(problem)")
            if !problem.isTruncatableTail {
                print("start-up will refuse this log (pass --cut-corruption to receiptd to cut it there)")
                throw ExitCode(1)
            }
            print("start-up will truncate this torn tail")
        }
    }

    /// Asks the running receiptd to snapshot its state and remove covered segments.
    struct Compact: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Ask the running receiptd to compact its log now.")
        @OptionGroup var endpoints: Endpoints
        @Flag(help: "Print JSON.") var json = false

        func run() async throws {
            try Rendering.print(try await endpoints.ask(.compact), json: json)
        }
    }
}
