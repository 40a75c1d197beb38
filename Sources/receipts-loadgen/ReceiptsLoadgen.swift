import ArgumentParser

/// The load generator and end-to-end benchmark harness of receiptd (SPEC §8, BENCHMARKS.md).
@main
struct ReceiptsLoadgen: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipts-loadgen",
        abstract: "Load generator and benchmark harness for receiptd.",
        subcommands: [RunCommand.self, BenchCommand.self, SinkCommand.self]
    )
}
