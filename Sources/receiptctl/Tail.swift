import ArgumentParser
import ReceiptsCore
import ReceiptsWire
import ZeroMQ

/// Prints status updates of a conversation or a topic prefix as they are published.
///
/// With `--snapshot` (one conversation), it follows the zguide's Clone pattern: subscribe
/// first, fetch a snapshot, skip updates the snapshot already covers, and fetch a new
/// snapshot whenever a sequence gap or a new epoch shows that updates were lost.
struct Tail: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print status updates as they are published.",
        discussion: """
            Examples:
              receiptctl tail --conversation c1 --snapshot
              receiptctl tail --prefix 01a3: --json
            """
    )

    @OptionGroup var endpoints: Endpoints

    @Option(help: "Follow one conversation.") var conversation: String?
    @Option(
        help: "Follow every topic starting with this prefix (\"<4 hex digits>:\" is one partition; \"\" is everything)."
    )
    var prefix: String?
    @Flag(help: "Start from a snapshot and repair gaps from snapshots (needs --conversation).") var snapshot = false
    @Option(help: "Stop after this many updates (0 = never).") var count: Int = 0
    @Option(help: "Stop after this many ms without an update (0 = never).") var idleTimeoutMs: Int32 = 0
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard (conversation == nil) != (prefix == nil) else {
            throw ValidationError("give exactly one of --conversation or --prefix")
        }
        if snapshot, conversation == nil { throw ValidationError("--snapshot needs --conversation") }
    }

    func run() throws {
        let context = try ZMQContext()
        defer { context.terminate() }
        let socket = try ZMQSocket(context: context, type: .sub)
        defer { socket.close() }
        try socket.setLinger(milliseconds: 0)
        if idleTimeoutMs > 0 { try socket.setReceiveTimeout(milliseconds: idleTimeoutMs) }
        let topic = conversation.map(Partitioning.topic(for:))
        try socket.subscribe(topic ?? prefix ?? "")
        try socket.connect(endpoints.publishEndpoint)

        var position: (epoch: UInt64, sequence: UInt64)?
        if snapshot, let conversation {
            position = try printSnapshot(conversation)
        }
        var printed = 0
        while count == 0 || printed < count {
            guard let frames = try socket.receiveMultipart() else { return }
            guard frames.count == 2 else { continue }
            // Prefix subscriptions also match longer conversation ids: compare the whole topic.
            if let topic, frames[0] != Array(topic.utf8) { continue }
            let update = try StatusUpdate.decode(frames[1])
            if let current = position, let conversation {
                if update.epoch == current.epoch, update.sequence <= current.sequence { continue }
                if update.epoch != current.epoch || update.sequence != current.sequence + 1 {
                    print(
                        json
                            ? Rendering.encode(["gap": true, "epoch": update.epoch, "sequence": update.sequence])
                            : "gap before sequence \(update.sequence); fetching a snapshot"
                    )
                    position = try printSnapshot(conversation)
                    continue
                }
                position = (update.epoch, update.sequence)
            }
            var object = Rendering.object(update.status, displayText: nil)
            object["epoch"] = update.epoch
            object["updateSequence"] = update.sequence
            print(
                json
                    ? Rendering.encode(object)
                    : "#\(update.sequence) " + Rendering.text(update.status, displayText: nil)
            )
            printed += 1
        }
    }

    private func printSnapshot(_ conversation: String) throws -> (epoch: UInt64, sequence: UInt64) {
        let reply = try ask(.snapshot(conversation: conversation, limit: 0), endpoints)
        try Rendering.print(reply, json: json)
        guard case .snapshot(_, let epoch, let sequence) = reply else {
            throw CtlError("unexpected reply to a snapshot query")
        }
        return (epoch, sequence)
    }
}
