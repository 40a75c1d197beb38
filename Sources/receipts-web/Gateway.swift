import Foundation
import HummingbirdWebSocket
import Logging
import ReceiptsClient
import ReceiptsCore
import ReceiptsWire

/// The bridge between browsers and receiptd.
///
/// A browser says who it is (`hello`), then what its user does: send, received (`delivered`),
/// saw (`read`, with the device's time for reads queued offline), the privacy toggle,
/// mark-unread, the "Read By" sheet. Each becomes a receiptd event or query through
/// ``ReceiptsClient``; receiptd's status updates, followed per conversation, go back to every
/// member's browser with the text the sender's own browser shows (its time zone and locale).
actor Gateway {
    /// Pushes a browser may have unread before it is closed.
    static let sessionBuffer = 1024

    /// One browser tab.
    private struct Session {
        var output: AsyncStream<String>.Continuation
        var user: String?
        var timeZone = ""
        var locale = ""
        var prefersCounts = false
    }

    private let client: ReceiptsClient
    /// Prepended to every id given to receiptd.
    private let namespace: String
    private var backend: ChatBackend
    private let logger: Logger
    private var sessions: [Int: Session] = [:]
    private var nextSession = 1
    /// The newest status of each message, by the backend's message id.
    private var statuses: [String: MessageStatus] = [:]

    init(client: ReceiptsClient, namespace: String, backend: ChatBackend, logger: Logger) {
        self.client = client
        self.namespace = namespace
        self.backend = backend
        self.logger = logger
    }

    // MARK: - Ids

    private func external(_ id: String) -> String {
        namespace + id
    }

    private func local(_ id: String) -> String {
        id.hasPrefix(namespace) ? String(id.dropFirst(namespace.count)) : id
    }

    // MARK: - Start

    /// Tells receiptd the demo's conversations and their "created the group" system messages.
    /// - Throws: `ReceiptsClientError` if receiptd cannot be reached or refuses the batch.
    func seed() async throws {
        var events: [EventKind] = backend.conversations.map { conversation in
            .conversationUpserted(
                conversation: external(conversation.id),
                kind: conversation.isGroup ? .group : .direct,
                members: conversation.members.map(external)
            )
        }
        for conversation in backend.conversations where conversation.isGroup {
            let creator = conversation.members[0]
            let name = backend.user(creator)?.name ?? creator
            let message = backend.append(
                conversation: conversation.id,
                sender: creator,
                text: "\(name) created the group “\(conversation.title)”",
                isSystem: true
            )
            events.append(
                .messageSent(
                    conversation: external(conversation.id),
                    message: external(message.id),
                    sender: external(creator),
                    isSystem: true
                )
            )
        }
        for (event, outcome) in zip(events, try await client.send(events)) {
            accepted(outcome, event)
        }
    }

    /// Follows every conversation's status updates until cancelled.
    func followUpdates() async {
        let conversations = backend.conversations.map { external($0.id) }
        let client = self.client
        await withDiscardingTaskGroup { group in
            for conversation in conversations {
                group.addTask {
                    for await update in client.subscribe(to: .conversation(conversation)) {
                        await self.apply(update.status)
                    }
                }
            }
        }
    }

    /// Stores a message's new status and pushes it to the members' browsers.
    private func apply(_ status: MessageStatus) {
        statuses[local(status.message)] = status
        let conversation = local(status.conversation)
        guard let members = backend.conversation(conversation)?.members else { return }
        for (id, session) in sessions {
            guard let user = session.user, members.contains(user) else { continue }
            var outgoing = Outgoing(type: "status")
            outgoing.status = view(status, for: session)
            push(outgoing, to: id)
        }
    }

    // MARK: - Browsers

    /// Serves one browser's WebSocket until it closes.
    nonisolated func serve(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) async {
        // Bounded: a browser that stops reading is closed (it reconnects and gets a fresh
        // state) instead of piling up pushes in the gateway.
        let (stream, output) = AsyncStream.makeStream(
            of: String.self,
            bufferingPolicy: .bufferingOldest(Self.sessionBuffer)
        )
        let id = await register(output)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await text in stream {
                    do { try await outbound.write(.text(text)) } catch { break }
                }
            }
            group.addTask {
                do {
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        guard case .text(let text) = message else { continue }
                        await self.handle(text, from: id)
                    }
                } catch {
                    // A closed or broken socket ends the session like a clean close.
                }
            }
            _ = await group.next()
            group.cancelAll()
        }
        await unregister(id)
    }

    private func register(_ output: AsyncStream<String>.Continuation) -> Int {
        let id = nextSession
        nextSession += 1
        sessions[id] = Session(output: output)
        return id
    }

    private func unregister(_ id: Int) {
        sessions.removeValue(forKey: id)?.output.finish()
    }

    private func push(_ outgoing: Outgoing, to id: Int) {
        guard let session = sessions[id], let data = try? JSONEncoder().encode(outgoing) else { return }
        if case .dropped = session.output.yield(String(decoding: data, as: UTF8.self)) {
            logger.warning("closing a browser that does not keep up", metadata: ["web.session": "\(id)"])
            session.output.finish()
        }
    }

    private func push(_ outgoing: Outgoing, toUser user: String) {
        for (id, session) in sessions where session.user == user { push(outgoing, to: id) }
    }

    private func fail(_ message: String, to id: Int) {
        var outgoing = Outgoing(type: "error")
        outgoing.error = message
        push(outgoing, to: id)
    }

    /// One frame from a browser.
    private func handle(_ text: String, from id: Int) async {
        guard let command = try? JSONDecoder().decode(Incoming.self, from: Data(text.utf8)) else {
            return fail("not a command: \(text.prefix(80))", to: id)
        }
        if command.type == "hello" { return await hello(command, from: id) }
        guard let user = sessions[id]?.user, let account = backend.user(user), !account.deleted else {
            return fail("say hello as an existing user first", to: id)
        }
        do {
            switch command.type {
            case "privacy":
                let shareReads = command.shareReads ?? true
                try await send(.receiptPrivacy(user: external(user), shareReads: shareReads))
                backend.sharesReads[user] = shareReads
                var outgoing = Outgoing(type: "privacy")
                outgoing.shareReads = shareReads
                push(outgoing, toUser: user)
            case "deleteAccount":
                try await send(.userDeleted(user: external(user)))
                backend.markDeleted(user)
                var outgoing = Outgoing(type: "users")
                outgoing.users = backend.users
                for other in sessions.keys { push(outgoing, to: other) }
            default:
                try await handle(command, in: conversation(of: command, for: user), from: id, as: user)
            }
        } catch {
            logger.warning("command failed", metadata: ["web.command": "\(command.type)", "error": "\(error)"])
            fail("\(command.type) failed: \(error)", to: id)
        }
    }

    /// The conversation a command names, if the user is a member.
    private func conversation(of command: Incoming, for user: String) throws -> ChatBackend.Conversation {
        guard let id = command.conversation, let conversation = backend.conversation(id),
            conversation.members.contains(user)
        else { throw CommandError("no such conversation of \(user)") }
        return conversation
    }

    /// A command about one conversation.
    private func handle(
        _ command: Incoming,
        in conversation: ChatBackend.Conversation,
        from id: Int,
        as user: String
    ) async throws {
        switch command.type {
        case "send":
            let text = (command.text ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { throw CommandError("empty message") }
            let message = backend.append(conversation: conversation.id, sender: user, text: text, isSystem: false)
            try await send(
                .messageSent(
                    conversation: external(conversation.id),
                    message: external(message.id),
                    sender: external(user),
                    isSystem: false
                )
            )
            var outgoing = Outgoing(type: "message")
            outgoing.message = message
            for member in conversation.members { push(outgoing, toUser: member) }
            for member in conversation.members where member != user { await pushUnread(to: member) }
        case "delivered":
            let message = try known(command.message, in: conversation)
            try await send(
                .delivered(conversation: external(conversation.id), user: external(user), message: external(message))
            )
        case "read":
            let message = try known(command.message, in: conversation)
            try await send(
                .read(conversation: external(conversation.id), user: external(user), message: external(message)),
                clientTime: command.clientTime.map { Timestamp(milliseconds: $0) }
            )
            await pushUnread(to: user)
        case "markUnread":
            try await send(.markedUnread(conversation: external(conversation.id), user: external(user)))
            await pushUnread(to: user)
        case "readDetail":
            let message = try known(command.message, in: conversation)
            guard backend.message(message)?.sender == user else { throw CommandError("only the sender sees who read") }
            let detail = try await client.readDetail(of: external(message), in: external(conversation.id))
            var outgoing = Outgoing(type: "readDetail")
            outgoing.detail = DetailView(
                conversation: conversation.id,
                message: message,
                read: detail.read.map(row),
                delivered: detail.delivered.map(row),
                notDelivered: detail.notDelivered.map(row)
            )
            outgoing.request = command.request
            push(outgoing, to: id)
        default:
            throw CommandError("unknown command \(command.type)")
        }
    }

    /// `hello`: who the tab is, its time zone, locale and group style; answered with everything
    /// the page shows.
    private func hello(_ command: Incoming, from id: Int) async {
        guard let user = command.user, let account = backend.user(user), !account.deleted,
            var session = sessions[id]
        else {
            return fail("unknown user \(command.user ?? "")", to: id)
        }
        session.user = user
        session.timeZone = command.timeZone ?? ""
        session.locale = (command.locale ?? "").replacingOccurrences(of: "-", with: "_")
        session.prefersCounts = command.prefersCounts ?? false
        sessions[id] = session
        let conversations = backend.conversations(of: user)
        let ids = Set(conversations.map(\.id))
        var outgoing = Outgoing(type: "init")
        outgoing.me = user
        outgoing.users = backend.users
        outgoing.conversations = conversations
        outgoing.messages = backend.messages.filter { ids.contains($0.conversation) }
        outgoing.statuses = outgoing.messages?.compactMap { message in
            statuses[message.id].map { view($0, for: session) }
        }
        outgoing.shareReads = backend.sharesReads[user] ?? true
        push(outgoing, to: id)
        await pushUnread(to: user)
    }

    // MARK: - receiptd

    /// Sends one event; a rejection is an error for the browser.
    private func send(_ event: EventKind, clientTime: Timestamp? = nil) async throws {
        let outcome = try await client.send(event, clientTime: clientTime)
        if !accepted(outcome, event) { throw CommandError("receiptd refused it: \(outcome)") }
    }

    /// Whether receiptd took the event (a duplicate was taken before); logs a refusal.
    @discardableResult
    private func accepted(_ outcome: EventOutcome, _ event: EventKind) -> Bool {
        guard case .rejected(let rejection) = outcome else { return true }
        logger.warning(
            "receiptd refused an event",
            metadata: [
                "web.event": "\(event)", "web.reason": "\(rejection.reason.name)", "web.detail": "\(rejection.detail)",
            ]
        )
        return false
    }

    private func known(_ message: String?, in conversation: ChatBackend.Conversation) throws -> String {
        guard let message, backend.message(message)?.conversation == conversation.id else {
            throw CommandError("no such message in \(conversation.id)")
        }
        return message
    }

    /// Pushes a user's unread counts to their tabs (private reads count: this user only).
    private func pushUnread(to user: String) async {
        guard sessions.values.contains(where: { $0.user == user }) else { return }
        let conversations = backend.conversations(of: user).map { external($0.id) }
        do {
            let counts = try await client.unreadCounts(for: external(user), in: conversations)
            var outgoing = Outgoing(type: "unread")
            outgoing.unread = counts.map {
                UnreadView(conversation: local($0.conversation), unread: $0.unread, markedUnread: $0.isMarkedUnread)
            }
            push(outgoing, toUser: user)
        } catch {
            logger.warning("unread counts failed", metadata: ["web.user": "\(user)", "error": "\(error)"])
        }
    }

    // MARK: - Views

    private func view(_ status: MessageStatus, for session: Session) -> StatusView {
        let viewer = Viewer(
            user: external(session.user ?? ""),
            timeZone: session.timeZone,
            locale: session.locale,
            prefersCounts: session.prefersCounts
        )
        return StatusView(
            conversation: local(status.conversation),
            message: local(status.message),
            status: "\(status.status)",
            recipientCount: status.recipientCount,
            deliveredCount: status.deliveredCount,
            readCount: status.readCount,
            readAt: status.readAt?.milliseconds,
            text: DisplayText.text(for: status, viewer: viewer)
        )
    }

    private func row(_ receipt: RecipientReceipt) -> DetailView.Row {
        let user = local(receipt.user)
        return DetailView.Row(
            user: user,
            name: receipt.isUserDeleted ? "Deleted User" : (backend.user(user)?.name ?? user),
            deleted: receipt.isUserDeleted,
            readAt: receipt.readAt?.milliseconds,
            deliveredAt: receipt.deliveredAt?.milliseconds
        )
    }
}

/// A browser command that cannot be carried out; its text goes back to the browser.
struct CommandError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
