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
            push(.status(view(status, for: session)), to: id)
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
        push(.error(message), to: id)
    }

    /// One frame from a browser.
    private func handle(_ text: String, from id: Int) async {
        let command: Incoming
        do {
            command = try JSONDecoder().decode(Incoming.self, from: Data(text.utf8))
        } catch let refusal as IncomingError {
            return fail(refusal.description, to: id)
        } catch {
            return fail("not a command: \(text.prefix(80))", to: id)
        }
        if case .hello(let user, let timeZone, let locale, let prefersCounts) = command {
            return await hello(user, timeZone: timeZone, locale: locale, prefersCounts: prefersCounts, from: id)
        }
        guard let user = sessions[id]?.user, let account = backend.user(user), !account.deleted else {
            return fail("say hello as an existing user first", to: id)
        }
        do {
            switch command {
            case .hello:
                return  // answered above: the one command before the tab has a user
            case .send(let conversation, let text):
                try await sendMessage(text, in: conversation, as: user)
            case .delivered(let conversation, let message):
                try await acknowledgeDelivery(of: message, in: conversation, as: user)
            case .read(let conversation, let message, let clientTime):
                try await markRead(message, in: conversation, at: clientTime, as: user)
            case .privacy(let shareReads, let conversation):
                try await setPrivacy(shareReads, in: conversation, of: user)
            case .markUnread(let conversation):
                try await markUnread(conversation, as: user)
            case .readDetail(let conversation, let message, let request):
                try await showReadDetail(of: message, in: conversation, request: request, as: user, to: id)
            case .deleteAccount:
                try await deleteAccount(of: user)
            }
        } catch {
            let name = command.kind.rawValue
            logger.warning("command failed", metadata: ["web.command": "\(name)", "error": "\(error)"])
            fail("\(name) failed: \(error)", to: id)
        }
    }

    /// `hello`: who the tab is, its time zone, locale and group style; answered with everything
    /// the page shows.
    private func hello(_ user: String, timeZone: String, locale: String, prefersCounts: Bool, from id: Int) async {
        guard let account = backend.user(user), !account.deleted, var session = sessions[id] else {
            return fail("unknown user \(user)", to: id)
        }
        session.user = user
        session.timeZone = timeZone
        session.locale = locale.replacingOccurrences(of: "-", with: "_")
        session.prefersCounts = prefersCounts
        sessions[id] = session
        let conversations = backend.conversations(of: user)
        let ids = Set(conversations.map(\.id))
        let messages = backend.messages.filter { ids.contains($0.conversation) }
        let initial = Outgoing.initial(
            me: user,
            users: backend.users,
            conversations: conversations,
            messages: messages,
            statuses: messages.compactMap { message in statuses[message.id].map { view($0, for: session) } },
            shareReads: backend.sharesReads[user] ?? true,
            privateConversations: (backend.privateConversations[user] ?? []).sorted()
        )
        push(initial, to: id)
        await pushUnread(to: user)
    }

    /// `send`: a new message, stored here, told to receiptd and pushed to every member.
    private func sendMessage(_ text: String, in conversation: String, as user: String) async throws {
        let conversation = try self.conversation(conversation, of: user)
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
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
        for member in conversation.members { push(.message(message), toUser: member) }
        for member in conversation.members where member != user { await pushUnread(to: member) }
    }

    /// `delivered`: a message from someone else reached the user's browser.
    private func acknowledgeDelivery(of message: String, in conversation: String, as user: String) async throws {
        let conversation = try self.conversation(conversation, of: user)
        try requireKnown(message, in: conversation)
        try await send(
            .delivered(conversation: external(conversation.id), user: external(user), message: external(message))
        )
    }

    /// `read`: the user saw a conversation up to a message, now or at `clientTime` on the device.
    private func markRead(
        _ message: String,
        in conversation: String,
        at clientTime: Int64?,
        as user: String
    ) async throws {
        let conversation = try self.conversation(conversation, of: user)
        try requireKnown(message, in: conversation)
        try await send(
            .read(conversation: external(conversation.id), user: external(user), message: external(message)),
            clientTime: clientTime.map { Timestamp(milliseconds: $0) }
        )
        await pushUnread(to: user)
    }

    /// `privacy`: a "Send read receipts" switch, the user's own or one conversation's (the
    /// stricter of the two applies), pushed to all their tabs.
    private func setPrivacy(_ shareReads: Bool, in conversation: String?, of user: String) async throws {
        guard let conversation else {
            try await send(.receiptPrivacy(user: external(user), shareReads: shareReads))
            backend.sharesReads[user] = shareReads
            push(.privacy(shareReads: shareReads, conversation: nil), toUser: user)
            return
        }
        let id = try self.conversation(conversation, of: user).id
        try await send(
            .conversationReceiptPrivacy(conversation: external(id), user: external(user), shareReads: shareReads)
        )
        if shareReads {
            backend.privateConversations[user, default: []].remove(id)
        } else {
            backend.privateConversations[user, default: []].insert(id)
        }
        push(.privacy(shareReads: shareReads, conversation: id), toUser: user)
    }

    /// `markUnread`: "Mark as unread" on a conversation.
    private func markUnread(_ conversation: String, as user: String) async throws {
        let conversation = try self.conversation(conversation, of: user)
        try await send(.markedUnread(conversation: external(conversation.id), user: external(user)))
        await pushUnread(to: user)
    }

    /// `readDetail`: the "Read By" sheet of one of the user's own messages, for the asking tab.
    private func showReadDetail(
        of message: String,
        in conversation: String,
        request: Int?,
        as user: String,
        to id: Int
    ) async throws {
        let conversation = try self.conversation(conversation, of: user)
        try requireKnown(message, in: conversation)
        guard backend.message(message)?.sender == user else { throw CommandError("only the sender sees who read") }
        let detail = try await client.readDetail(of: external(message), in: external(conversation.id))
        let view = DetailView(
            conversation: conversation.id,
            message: message,
            read: detail.read.map(row),
            delivered: detail.delivered.map(row),
            notDelivered: detail.notDelivered.map(row)
        )
        push(.readDetail(view, request: request), to: id)
    }

    /// `deleteAccount`: the user is gone; every tab gets the new user list.
    private func deleteAccount(of user: String) async throws {
        try await send(.userDeleted(user: external(user)))
        backend.markDeleted(user)
        for other in sessions.keys { push(.users(backend.users), to: other) }
    }

    /// The conversation `id` names, if the user is a member.
    private func conversation(_ id: String, of user: String) throws -> ChatBackend.Conversation {
        guard let conversation = backend.conversation(id), conversation.members.contains(user) else {
            throw CommandError("no such conversation of \(user)")
        }
        return conversation
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

    /// Refuses a message id that is not a message of the conversation.
    private func requireKnown(_ message: String, in conversation: ChatBackend.Conversation) throws {
        guard backend.message(message)?.conversation == conversation.id else {
            throw CommandError("no such message in \(conversation.id)")
        }
    }

    /// Pushes a user's unread counts to their tabs (private reads count: this user only).
    private func pushUnread(to user: String) async {
        guard sessions.values.contains(where: { $0.user == user }) else { return }
        let conversations = backend.conversations(of: user).map { external($0.id) }
        do {
            let counts = try await client.unreadCounts(for: external(user), in: conversations)
            let unread = counts.map {
                UnreadView(conversation: local($0.conversation), unread: $0.unread, markedUnread: $0.isMarkedUnread)
            }
            push(.unread(unread), toUser: user)
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
