import ArgumentParser
import Foundation
import ReceiptsClient
import ReceiptsCore

/// Sends events to the acknowledged ingest endpoint and prints each event's outcome.
struct Send: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Send one event from flags, or JSON lines from stdin (--json), and print the outcomes.",
        discussion: """
            Examples:
              receiptctl send conversation --conversation c1 --conversation-kind direct --members alice,bob
              receiptctl send message --conversation c1 --message m1 --sender alice
              receiptctl send read --conversation c1 --user bob --message m1
              echo '{"kind":"delivered","conversation":"c1","user":"bob","message":"m1"}' | receiptctl send --json
            """
    )

    @OptionGroup var endpoints: Endpoints

    @Argument(help: "Event kind: \(EventKindName.allCases.map(\.rawValue).joined(separator: ", ")). Omit with --json.")
    var kind: EventKindName?

    @Flag(help: "Read events as JSON lines from stdin; all lines go in one batch.")
    var json = false

    @Option(help: "Event source id (default: receiptctl-<pid>).")
    var source: String?

    @Option(
        help: "Event sequence of the first event (default: milliseconds since the epoch, so reruns are new events)."
    )
    var sequence: UInt64?

    @Option var conversation: String?
    @Option(help: "direct or group (conversation events).") var conversationKind: String?
    @Option(help: "Comma-separated member ids (conversation events).") var members: String?
    @Option var message: String?
    @Option var sender: String?
    @Option var user: String?
    @Flag(help: "A system message (message events).") var system = false
    @Option(help: "Comma-separated user ids the message mentions (message events).") var mentions: String?
    @Flag(help: "The message mentions everyone (message events).") var mentionsEveryone = false
    @Option(
        help:
            "The thread's root message: a message replies in it, a receipt is given in it (without --message: up to its last reply), follow and unfollow name it."
    )
    var thread: String?
    @Option(help: "true or false (privacy events).") var shareReads: Bool?
    @Option(help: "Client time in ms since the epoch for an offline-queued receipt.") var clientTimeMs: Int64?

    @Flag(help: "Print the outcomes as JSON.")
    var outputJSON = false

    func run() async throws {
        let specs: [EventSpec]
        if json {
            specs = try Self.readJSONLines()
        } else {
            guard let kind else { throw CtlError("give an event kind, or --json to read events from stdin") }
            specs = [
                EventSpec(
                    kind: kind,
                    conversation: conversation,
                    conversationKind: conversationKind,
                    members: members?.split(separator: ",").map(String.init),
                    message: message,
                    sender: sender,
                    user: user,
                    system: system,
                    mentions: mentions?.split(separator: ",").map(String.init),
                    mentionsEveryone: mentionsEveryone,
                    thread: thread,
                    shareReads: shareReads,
                    clientTimeMs: clientTimeMs
                )
            ]
        }
        let defaultSource = source ?? "receiptctl-\(ProcessInfo.processInfo.processIdentifier)"
        let firstSequence = sequence ?? UInt64(Date().timeIntervalSince1970 * 1000)
        let events = try specs.enumerated().map { index, spec in
            try spec.event(source: defaultSource, sequence: firstSequence + UInt64(index))
        }
        // All events in one frame, as the help promises.
        var configuration = try endpoints.clientConfiguration
        configuration.maxBatchEvents = max(events.count, 1)
        let outcomes = try await endpoints.withClient(configuration) { client in
            try await endpoints.send(events, client)
        }
        for (event, outcome) in zip(events, outcomes) {
            print(
                outputJSON
                    ? Rendering.json(event: event, outcome: outcome) : Rendering.text(event: event, outcome: outcome)
            )
        }
    }

    private static func readJSONLines() throws -> [EventSpec] {
        var specs: [EventSpec] = []
        let decoder = JSONDecoder()
        var lineNumber = 0
        while let line = readLine() {
            lineNumber += 1
            guard !line.trimmingCharacters(in: .whitespaces).isEmpty else { continue }
            do {
                specs.append(try decoder.decode(EventSpec.self, from: Data(line.utf8)))
            } catch {
                throw CtlError("stdin line \(lineNumber): \(error)")
            }
        }
        return specs
    }
}
