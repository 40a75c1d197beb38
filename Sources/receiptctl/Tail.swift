import ArgumentParser
import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsWire

/// Prints status updates of a conversation or a topic prefix, or a user's read states, as they
/// are published.
///
/// A conversation is followed with the zguide's Clone pattern (by `ReceiptsClient`): a late
/// join, a sequence gap or a new epoch is repaired from a snapshot, so every message's status
/// shows in order. `--snapshot` prints the conversation's state first; either way only what
/// changes after that state is printed as an update. `--user` prints the user's own read states
/// as the subscription starts from them (every conversation and thread of theirs, the time 0),
/// then the state in a conversation (and in a thread, when the change was one there) at each
/// change.
struct Tail: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print status updates or a user's read states as they are published.",
        discussion: """
            Examples:
              receiptctl tail --conversation c1 --snapshot
              receiptctl tail --prefix 01a3: --json
              receiptctl tail --user alice
            """
    )

    @OptionGroup var endpoints: Endpoints

    @Option(help: "Follow one conversation.") var conversation: String?
    @Option(
        help: "Follow every topic starting with this prefix (\"<4 hex digits>:\" is one partition; \"\" is everything)."
    )
    var prefix: String?
    @Option(
        help:
            "Follow one user's read states (unread, mention and thread counts) on every worker: the current ones, then each change."
    )
    var user: String?
    @Flag(help: "Print a snapshot first; gaps are repaired from snapshots either way (needs --conversation).")
    var snapshot = false
    @Option(help: "Stop after this many updates (0 = never).") var count: Int = 0
    @Option(help: "Stop after this many ms without an update (0 = never).") var idleTimeoutMs: Int32 = 0
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard [conversation, prefix, user].compactMap(\.self).count == 1 else {
            throw ValidationError("give exactly one of --conversation, --prefix or --user")
        }
        if snapshot, conversation == nil { throw ValidationError("--snapshot needs --conversation") }
    }

    func run() async throws {
        try await endpoints.withClient { client in
            let (json, idleTimeout) = (json, idleTimeoutMs > 0 ? Duration.milliseconds(idleTimeoutMs) : nil)
            if let user {
                let updates = client.subscribe(to: ReadStateTopic.user(user))
                await Self.follow(updates, limit: count, idleTimeout: idleTimeout) { Self.line($0, json: json) }
                return
            }
            let topic: SubscriptionTopic = conversation.map { .conversation($0) } ?? .prefix(prefix ?? "")
            // Subscribed first, so that the snapshot below is usually not older than the
            // subscription's own: what the subscription starts with is then already shown.
            let updates = client.subscribe(to: topic)
            let start: TailStart? = if let conversation { try await startingPoint(conversation, client) } else { nil }
            await Self.follow(updates, limit: count, idleTimeout: idleTimeout) { update in
                if let start, start.covers(update) { return nil }
                return Self.line(update, json: json)
            }
        }
    }

    /// Takes the conversation's snapshot (printed with `--snapshot`) as the point after which
    /// updates are printed.
    /// - Returns: The snapshot's position and statuses, or nil if there is none (without
    ///   `--snapshot`: everything the subscription reports is then printed).
    /// - Throws: With `--snapshot`, `CtlError` for an error reply or no reply.
    private func startingPoint(_ conversation: String, _ client: ReceiptsClient) async throws -> TailStart? {
        let query = Query.snapshot(conversation: conversation, limit: 0)
        let reply: QueryReply
        if snapshot {
            reply = try await endpoints.ask(query, client)
            try Rendering.print(reply, json: json)
            fflush(nil)
        } else {
            guard let answer = try? await endpoints.ask(query, client) else { return nil }
            reply = answer
        }
        guard case .snapshot(let state, let publisherRun, let sequence) = reply else { return nil }
        return TailStart(snapshot: state, publisherRun: publisherRun, sequence: sequence)
    }

    /// Prints a line for each update `line` renders (nil: skipped), flushed, until `limit` are
    /// printed (0: no limit), the subscription ends, or nothing came for `idleTimeout`.
    private static func follow<Updates: AsyncSequence & Sendable>(
        _ updates: Updates,
        limit: Int,
        idleTimeout: Duration?,
        line: @escaping @Sendable (Updates.Element) -> String?
    ) async {
        guard let idleTimeout else {
            await printLines(of: updates, limit: limit, idleTimer: nil, line: line)
            return
        }
        let idleTimer = IdleTimer(timeout: idleTimeout)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await printLines(of: updates, limit: limit, idleTimer: idleTimer, line: line) }
            group.addTask { await idleTimer.expiry() }
            // Whichever ends first ends the other: a cancelled iteration returns nil.
            await group.next()
            group.cancelAll()
        }
    }

    private static func printLines<Updates: AsyncSequence>(
        of updates: Updates,
        limit: Int,
        idleTimer: IdleTimer?,
        line: (Updates.Element) -> String?
    ) async {
        var iterator = updates.makeAsyncIterator()
        var printed = 0
        while limit == 0 || printed < limit {
            // A subscription ends or is cancelled, never fails.
            guard let update = try? await iterator.next() else { return }
            idleTimer?.reset()
            guard let text = line(update) else { continue }
            print(text)
            fflush(nil)
            printed += 1
        }
    }

    private static func line(_ update: StatusUpdate, json: Bool) -> String {
        guard json else { return "#\(update.sequence) " + Rendering.text(update.status, displayText: nil) }
        var object = Rendering.object(update.status, displayText: nil)
        object["epoch"] = update.publisherRun
        object["updateSequence"] = update.sequence
        return Rendering.encode(object)
    }

    private static func line(_ update: ReadStateUpdate, json: Bool) -> String {
        let change = update.change
        guard json else {
            return "#\(update.sequence) \(change.user) " + Rendering.text(change.state)
                + (change.thread.map { "; " + Rendering.text($0) } ?? "")
        }
        var object: [String: Any] = [
            "user": change.user, "state": Rendering.object(change.state), "updatedAtMs": change.time.milliseconds,
            "epoch": update.publisherRun, "updateSequence": update.sequence,
        ]
        object["thread"] = change.thread.map(Rendering.object)
        return Rendering.encode(object)
    }
}
