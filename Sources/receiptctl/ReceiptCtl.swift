import ArgumentParser
// `stdout` is a C global, which Swift 6 refuses to touch without this; it is set once, before
// any other code runs.
@preconcurrency import Glibc

/// receiptctl: send events, run queries, tail status updates, change the worker count, inspect and
/// compact a log, make CURVE keys, see and move a replicated ordinal's primary.
@main
struct ReceiptCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receiptctl",
        abstract: "Talk to a running receiptd, or inspect its data directory.",
        subcommands: [
            Send.self, QueryCommand.self, Tail.self, Health.self, Stats.self, Rebalance.self, LogCommand.self,
            Keygen.self, ReplicationCommand.self, Demote.self, Promote.self,
        ]
    )

    /// Line-buffers standard output, then runs the command: every line any command prints
    /// reaches a file or a pipe once it is whole (SPEC §9), so the log of a driver killed in
    /// the middle of a move keeps what it printed. (Without this, output to a file or a pipe
    /// is held in a 4 KiB buffer until exit.)
    static func main() async {
        setvbuf(stdout, nil, _IOLBF, 0)
        await main(nil)
    }
}
