import ArgumentParser

/// receiptctl: send events, run queries, tail status updates, change the worker count, inspect and
/// compact a log, make CURVE keys.
@main
struct ReceiptCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receiptctl",
        abstract: "Talk to a running receiptd, or inspect its data directory.",
        subcommands: [
            Send.self, QueryCommand.self, Tail.self, Health.self, Stats.self, Rebalance.self, LogCommand.self,
            Keygen.self,
        ]
    )
}
