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
/// mark-unread, the "Read By" sheet a page at a time. Each becomes a receiptd event or query
/// through ``ReceiptsClient``; receiptd's status updates, followed per conversation, go back to
/// every member's browser with the text the sender's own browser shows (its time zone and
/// locale). A user's unread badges come from their read-state topic, followed while they have a
/// tab open, so that a read on one device (through any gateway) clears the badge on the others.
actor Gateway {
    /// Pushes a browser may have unread before it is closed.
    static let sessionBuffer = 1024
    /// Lines of a "Read By" page whose `readDetail` does not say how many.
    static let readDetailPageSize = 20
    /// The most lines one `readDetail` answers (a page reloading every line it shows asks for more
    /// than one page).
    static let readDetailMaxLines = 500

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
    /// Whom each message sent here mentions, by the backend's message id: what the badges count
    /// of messages the user's topic has not told of yet (`@everyone` publishes nothing there).
    private var mentions: [String: Mentions] = [:]
    /// The read-state subscription of each user with a tab open.
    private var followers: [String: ReadStateFollower] = [:]
    private var nextFollower = 1

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
            accepted(outcome, "\(event)")
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

    /// Stores a message's new status and pushes it to the members' browsers; a new (or deleted)
    /// message changes the members' badges, which their read-state topics do not tell.
    private func apply(_ status: MessageStatus) {
        let previous = statuses.updateValue(status, forKey: local(status.message))
        let conversation = local(status.conversation)
        guard let members = backend.conversation(conversation)?.members else { return }
        for (id, session) in sessions {
            guard let user = session.user, members.contains(user) else { continue }
            push(.status(view(status, for: session)), to: id)
        }
        guard previous?.isDeleted != status.isDeleted else { return }
        for member in members where followers[member] != nil { showBadge(of: member, in: conversation) }
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
        guard let session = sessions.removeValue(forKey: id) else { return }
        session.output.finish()
        if let user = session.user { unfollowIfNoTab(user) }
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
            return hello(user, timeZone: timeZone, locale: locale, prefersCounts: prefersCounts, from: id)
        }
        guard let user = sessions[id]?.user, let account = backend.user(user), !account.deleted else {
            return fail("say hello as an existing user first", to: id)
        }
        do {
            switch command {
            case .hello:
                return  // answered above: the one command before the tab has a user
            case .send(let conversation, let text, let thread):
                try await sendMessage(text, in: conversation, thread: thread, as: user)
            case .delivered(let conversation, let message):
                try await acknowledgeDelivery(of: message, in: conversation, as: user)
            case .read(let conversation, let message, let clientTime, let thread):
                try await markRead(message, in: conversation, thread: thread, at: clientTime, as: user)
            case .privacy(let shareReads, let conversation):
                try await setPrivacy(shareReads, in: conversation, of: user)
            case .markUnread(let conversation):
                try await markUnread(conversation, as: user)
            case .readDetail(let conversation, let message, let after, let size, let request):
                let page = readDetailPage(after: after, size: size)
                try await showReadDetail(of: message, in: conversation, page: page, request: request, as: user, to: id)
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
    private func hello(_ user: String, timeZone: String, locale: String, prefersCounts: Bool, from id: Int) {
        guard let account = backend.user(user), !account.deleted, var session = sessions[id] else {
            return fail("unknown user \(user)", to: id)
        }
        let previousUser = session.user
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
        follow(user)
        if let badges = followers[user]?.shown.values, !badges.isEmpty {
            push(.unread(badges.sorted { $0.conversation < $1.conversation }), to: id)
        }
        if let threads = followers[user]?.threads.values, !threads.isEmpty {
            push(.threads(threads.sorted { $0.thread < $1.thread }), to: id)
        }
        if let previousUser, previousUser != user { unfollowIfNoTab(previousUser) }
    }

    /// `send`: a new message (with `thread`, a reply in that root's thread), stored here, told
    /// to receiptd and pushed to every member.
    private func sendMessage(_ text: String, in conversation: String, thread: String?, as user: String) async throws {
        let conversation = try self.conversation(conversation, of: user)
        let text = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw CommandError("empty message") }
        if let thread { try requireKnown(thread, in: conversation) }
        let message = backend.append(
            conversation: conversation.id,
            sender: user,
            text: text,
            isSystem: false,
            thread: thread
        )
        let mentioned = Self.mentions(in: text, members: conversation.members)
        mentions[message.id] = mentioned
        try await send(
            .messageSent(
                conversation: external(conversation.id),
                message: external(message.id),
                sender: external(user),
                isSystem: false,
                mentions: Mentions(users: mentioned.users.map(external), everyone: mentioned.everyone),
                thread: thread.map(external)
            )
        )
        for member in conversation.members { push(.message(message), toUser: member) }
    }

    /// Whom a message's text mentions: `@everyone`, and `@<user id>` of members.
    static func mentions(in text: String, members: [String]) -> Mentions {
        var mentions = Mentions()
        for word in text.split(whereSeparator: { $0.isWhitespace }) where word.hasPrefix("@") {
            let name = String(word.dropFirst().prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            if name == "everyone" {
                mentions.everyone = true
            } else if members.contains(name), !mentions.users.contains(name) {
                mentions.users.append(name)
            }
        }
        return mentions
    }

    /// `delivered`: a message from someone else reached the user's browser.
    private func acknowledgeDelivery(of message: String, in conversation: String, as user: String) async throws {
        let conversation = try self.conversation(conversation, of: user)
        try requireKnown(message, in: conversation)
        try await send(
            .delivered(conversation: external(conversation.id), user: external(user), message: external(message))
        )
    }

    /// `read`: the user saw a conversation (or with `thread` a thread) up to a message, now or
    /// at `clientTime` on the device.
    private func markRead(
        _ message: String,
        in conversation: String,
        thread: String?,
        at clientTime: Int64?,
        as user: String
    ) async throws {
        let conversation = try self.conversation(conversation, of: user)
        try requireKnown(message, in: conversation)
        try await send(
            .read(
                conversation: external(conversation.id),
                user: external(user),
                message: external(message),
                thread: thread.map(external)
            ),
            clientTime: clientTime.map { Timestamp(milliseconds: $0) }
        )
    }

    /// `privacy`: a "Send read receipts" switch, the user's own or one conversation's (the
    /// stricter of the two applies), pushed to all their tabs.
    private func setPrivacy(_ shareReads: Bool, in conversation: String?, of user: String) async throws {
        let id = try conversation.map { try self.conversation($0, of: user).id }
        let outcome = try await client.setReceiptPrivacy(
            user: external(user),
            shareReads: shareReads,
            in: id.map(external)
        )
        try require(outcome, of: "privacy of \(user) in \(id ?? "every conversation")")
        if let id {
            if shareReads {
                backend.privateConversations[user, default: []].remove(id)
            } else {
                backend.privateConversations[user, default: []].insert(id)
            }
        } else {
            backend.sharesReads[user] = shareReads
        }
        push(.privacy(shareReads: shareReads, conversation: id), toUser: user)
    }

    /// `markUnread`: "Mark as unread" on a conversation.
    private func markUnread(_ conversation: String, as user: String) async throws {
        let conversation = try self.conversation(conversation, of: user)
        try await send(.markedUnread(conversation: external(conversation.id), user: external(user)))
    }

    /// The page of a `readDetail`: `size` lines (``readDetailPageSize`` if left out, at most
    /// ``readDetailMaxLines``) after the cursor `after` (receiptd refuses one it did not give
    /// for that message).
    private func readDetailPage(after: String?, size: Int?) -> ReadDetailPage {
        ReadDetailPage(size: min(max(size ?? Self.readDetailPageSize, 1), Self.readDetailMaxLines), after: after)
    }

    /// `readDetail`: a page of the "Read By" sheet of one of the user's own messages, for the
    /// asking tab.
    private func showReadDetail(
        of message: String,
        in conversation: String,
        page: ReadDetailPage,
        request: Int?,
        as user: String,
        to id: Int
    ) async throws {
        let conversation = try self.conversation(conversation, of: user)
        try requireKnown(message, in: conversation)
        guard backend.message(message)?.sender == user else { throw CommandError("only the sender sees who read") }
        let detail = try await client.readDetail(of: external(message), in: external(conversation.id), page: page)
        let view = DetailView(
            conversation: conversation.id,
            message: message,
            read: detail.read.map(row),
            delivered: detail.delivered.map(row),
            notDelivered: detail.notDelivered.map(row),
            next: detail.nextCursor
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
        try require(try await client.send(event, clientTime: clientTime), of: "\(event)")
    }

    /// Refuses an event receiptd did not take: an error for the browser.
    /// - Parameter event: The event, as the log names it.
    private func require(_ outcome: EventOutcome, of event: @autoclosure () -> String) throws {
        if !accepted(outcome, event()) { throw CommandError("receiptd refused it: \(outcome)") }
    }

    /// Whether receiptd took the event (a duplicate was taken before); logs a refusal.
    @discardableResult
    private func accepted(_ outcome: EventOutcome, _ event: @autoclosure () -> String) -> Bool {
        guard case .rejected(let rejection) = outcome else { return true }
        logger.warning(
            "receiptd refused an event",
            metadata: [
                "web.event": "\(event())", "web.reason": "\(rejection.reason.name)",
                "web.detail": "\(rejection.detail)",
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

    // MARK: - Read state

    /// Starts following a user's read-state topic, unless it is followed already: the badges
    /// of all of the user's tabs. It starts from the user's current state in each conversation.
    private func follow(_ user: String) {
        guard followers[user] == nil else { return }
        let id = nextFollower
        nextFollower += 1
        let updates = client.subscribe(to: .user(external(user)))
        // On this actor (it captures it): each update is stored as it is taken.
        let task = Task {
            for await update in updates {
                self.applyReadState(update.change.state, of: user, follower: id)
                if let thread = update.change.thread { self.applyThreadState(thread, of: user, follower: id) }
            }
        }
        followers[user] = ReadStateFollower(id: id, task: task)
    }

    /// Stops following a user's read-state topic once none of their tabs is left.
    private func unfollowIfNoTab(_ user: String) {
        guard !sessions.values.contains(where: { $0.user == user }) else { return }
        followers.removeValue(forKey: user)?.task.cancel()
    }

    /// Stores a user's new read state in a conversation (their own reads, private ones
    /// included: it goes to this user's tabs only) and shows its badge.
    /// - Parameter follower: The subscription it came from; a cancelled one's is dropped.
    private func applyReadState(_ state: UnreadCount, of user: String, follower: Int) {
        guard followers[user]?.id == follower else { return }
        let conversation = local(state.conversation)
        followers[user]?.states[conversation] = state
        showBadge(of: user, in: conversation)
    }

    /// Stores a user's new read state in a thread and pushes its badge to their tabs if it
    /// changed. The thread's replies are counted where receiptd counts them; the gateway adds
    /// nothing, since every reply to a thread the user follows reaches their topic.
    /// - Parameter follower: The subscription it came from; a cancelled one's is dropped.
    private func applyThreadState(_ state: ThreadReadState, of user: String, follower: Int) {
        guard followers[user]?.id == follower else { return }
        let badge = ThreadView(
            conversation: local(state.conversation),
            thread: local(state.thread),
            unread: state.hasLeft ? 0 : state.unread,
            mentions: state.hasLeft ? 0 : state.unreadMentions,
            following: state.isFollowing
        )
        guard followers[user]?.threads[badge.thread] != badge else { return }
        followers[user]?.threads[badge.thread] = badge
        push(.threads([badge]), toUser: user)
    }

    /// Pushes a conversation's badge to the user's tabs if it changed.
    private func showBadge(of user: String, in conversation: String) {
        guard let state = followers[user]?.states[conversation] else { return }
        let badge = badge(of: user, in: conversation, state: state)
        guard followers[user]?.shown[conversation] != badge else { return }
        followers[user]?.shown[conversation] = badge
        push(.unread([badge]), toUser: user)
    }

    /// A conversation's badge: the user's read state from their topic, which counts messages up
    /// to its change, and the messages from others after its watermark that this gateway has
    /// seen, since the topic tells of no new message. Neither counts more than the user has not
    /// read, so the badge is the larger: the state may be older than a message, or the gateway
    /// may not have seen a message yet. (A message deleted after the state still counts in it,
    /// until the user's next change.) Mentions are counted the same way.
    private func badge(of user: String, in conversation: String, state: UnreadCount) -> UnreadView {
        guard !state.hasLeft else {
            return UnreadView(conversation: conversation, unread: 0, mentions: 0, markedUnread: false)
        }
        let me = external(user)
        let seen = statuses.values.filter { status in
            status.conversation == state.conversation && status.sequence > state.readUpTo && status.sender != me
                && !status.isSystem && !status.isDeleted && status.threadRoot == nil
        }
        let seenMentions = seen.count { status in
            guard let mentioned = mentions[local(status.message)] else { return false }
            return mentioned.everyone || mentioned.users.contains(user)
        }
        return UnreadView(
            conversation: conversation,
            unread: max(state.unread, seen.count),
            mentions: max(state.unreadMentions, seenMentions),
            markedUnread: state.isMarkedUnread
        )
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
