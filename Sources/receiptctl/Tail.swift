import ArgumentParser
import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsWire

/// Prints status updates of a conversation or a topic prefix as they are published.
///
/// A conversation is followed with the zguide's Clone pattern (by `ReceiptsClient`): a late
/// join, a sequence gap or a new epoch is repaired from a snapshot, so every message's status
/// shows in order. `--snapshot` prints the conversation's state first; either way only what
/// changes after that state is printed as an update.
struct Tail: AsyncParsableCommand {
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
    @Flag(help: "Print a snapshot first; gaps are repaired from snapshots either way (needs --conversation).")
    var snapshot = false
    @Option(help: "Stop after this many updates (0 = never).") var count: Int = 0
    @Option(help: "Stop after this many ms without an update (0 = never).") var idleTimeoutMs: Int32 = 0
    @Flag(help: "Print JSON.") var json = false

    func validate() throws {
        guard (conversation == nil) != (prefix == nil) else {
            throw ValidationError("give exactly one of --conversation or --prefix")
        }
        if snapshot, conversation == nil { throw ValidationError("--snapshot needs --conversation") }
    }

    func run() async throws {
        try await endpoints.withClient { client in
            let topic: SubscriptionTopic = conversation.map { .conversation($0) } ?? .prefix(prefix ?? "")
            // Subscribed first, so that the snapshot below is usually not older than the
            // subscription's own: what the subscription starts with is then already shown.
            let updates = client.subscribe(to: topic)
            var start: TailStart?
            if let conversation { start = try await startingPoint(conversation, client) }
            await Self.follow(
                updates,
                after: start,
                limit: count,
                json: json,
                idleTimeout: idleTimeoutMs > 0 ? .milliseconds(idleTimeoutMs) : nil
            )
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

    /// Prints updates the start does not cover, one line each, flushed, until `limit` are
    /// printed (0: no limit), the subscription ends, or nothing came for `idleTimeout`.
    private static func follow(
        _ updates: StatusUpdates,
        after start: TailStart?,
        limit: Int,
        json: Bool,
        idleTimeout: Duration?
    ) async {
        guard let idleTimeout else {
            await printUpdates(updates, after: start, limit: limit, json: json, idleTimer: nil)
            return
        }
        let idleTimer = IdleTimer(timeout: idleTimeout)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await printUpdates(updates, after: start, limit: limit, json: json, idleTimer: idleTimer) }
            group.addTask { await idleTimer.expiry() }
            // Whichever ends first ends the other: a cancelled iteration returns nil.
            await group.next()
            group.cancelAll()
        }
    }

    private static func printUpdates(
        _ updates: StatusUpdates,
        after start: TailStart?,
        limit: Int,
        json: Bool,
        idleTimer: IdleTimer?
    ) async {
        var iterator = updates.makeAsyncIterator()
        var printed = 0
        while limit == 0 || printed < limit {
            guard let update = await iterator.next() else { return }
            idleTimer?.reset()
            if let start, start.covers(update) { continue }
            var object = Rendering.object(update.status, displayText: nil)
            object["epoch"] = update.publisherRun
            object["updateSequence"] = update.sequence
            print(
                json
                    ? Rendering.encode(object)
                    : "#\(update.sequence) " + Rendering.text(update.status, displayText: nil)
            )
            fflush(nil)
            printed += 1
        }
    }
}
