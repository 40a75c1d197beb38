import Foundation
import ReceiptsClient
import ReceiptsCore
import ReceiptsTestTraits
import ReceiptsWire
import Testing
import ZeroMQ

/// Users' read-state topics and the paged "Read by" sheet against the real daemon, through raw
/// ZeroMQ frames as a gateway written in another language uses them (issue 23): "u:" prefixes
/// and conversation prefixes never match each other's topics, a private read reaches its
/// reader's topic only, odd cursors are refused and paging lists every recipient once.
@Suite(.serialized, .startsProcesses)
struct ReadStateWireTests {
    /// One PUB message as a SUB socket receives it: the topic frame, then the update.
    typealias Published = [[UInt8]]

    /// A raw SUB socket on the daemon's PUB endpoint, subscribed to `prefixes` in this order.
    static func subscriber(_ daemon: ReceiptdProcess, prefixes: [String]) throws -> ZMQSocket {
        // A raw socket: it tests the wire contract itself (topics and prefixes).
        let socket = try ZMQSocket(context: daemon.context, type: .sub)
        for prefix in prefixes { try socket.subscribe(prefix) }
        try socket.connect(daemon.publishEndpoint)
        return socket
    }

    /// Receives messages until one satisfies `done` (it included), or until `timeoutMilliseconds`
    /// pass without any message.
    /// - Returns: Every message received, and whether one satisfied `done`.
    static func receive(
        _ socket: ZMQSocket,
        timeoutMilliseconds: Int32 = 5000,
        until done: (Published) throws -> Bool
    ) throws -> (messages: [Published], done: Bool) {
        try socket.setReceiveTimeout(milliseconds: timeoutMilliseconds)
        var messages: [Published] = []
        while let message = try socket.receiveMultipart() {
            guard message.count == 2 else { throw IntegrationError("an update has \(message.count) frames") }
            messages.append(message)
            if try done(message) { return (messages, true) }
        }
        return (messages, false)
    }

    /// Sends `attempt(i)` for i = 1, 2, ... until `socket` receives a message that `arrived`
    /// accepts, at most 100 tries of 50 ms: libzmq's PUB attaches a new subscriber only at a
    /// later send, so readiness is proven on the wire.
    /// - Returns: Every message received meanwhile.
    static func attach(
        _ socket: ZMQSocket,
        _ daemon: ReceiptdProcess,
        attempt: (Int) -> [EventKind],
        arrived: (Published) throws -> Bool
    ) async throws -> [Published] {
        var messages: [Published] = []
        for i in 1...100 {
            _ = try await daemon.client.send(attempt(i))
            let received = try receive(socket, timeoutMilliseconds: 50, until: arrived)
            messages += received.messages
            if received.done { return messages }
        }
        throw IntegrationError("the publisher did not attach a subscriber within 100 attempts")
    }

    /// ``attach(_:_:attempt:arrived:)`` by ``probe(_:)``'s reads in `conversation`, until
    /// probe-b's read state arrives (`socket` follows probe-b's topic).
    static func attachByReadState(
        _ socket: ZMQSocket,
        _ daemon: ReceiptdProcess,
        probe conversation: String
    ) async throws -> [Published] {
        try await attach(
            socket,
            daemon,
            attempt: probe(conversation),
            arrived: on(Partitioning.userTopic(for: "probe-b"))
        )
    }

    /// A direct conversation of `probe-a` and `probe-b`, whose messages probe-b reads one by one:
    /// each attempt publishes a status on the conversation's topic and a read state on
    /// probe-b's.
    static func probe(_ conversation: String) -> (Int) -> [EventKind] {
        { i in
            (i == 1
                ? [.conversationUpserted(conversation: conversation, kind: .direct, members: ["probe-a", "probe-b"])]
                : [])
                + [
                    .messageSent(conversation: conversation, message: "p\(i)", sender: "probe-a", isSystem: false),
                    .read(conversation: conversation, user: "probe-b", message: "p\(i)"),
                ]
        }
    }

    /// A message's topic frame is `topic` and the NUL that ends every frame.
    static func on(_ topic: String) -> (Published) -> Bool {
        { $0[0] == frame(topic) }
    }

    /// The topic frame of `topic` (`Partitioning.topic(for:)` or `userTopic(for:)`).
    static func frame(_ topic: String) -> [UInt8] {
        Array(topic.utf8) + [Partitioning.topicEnd]
    }

    /// A message is a status of message `message` of `conversation`: the last one a test sends
    /// shows that everything published before it has arrived (PUB keeps the order).
    static func status(of message: String, in conversation: String) -> (Published) throws -> Bool {
        { published in
            guard published[0] == frame(Partitioning.topic(for: conversation)) else { return false }
            return try StatusUpdate.decode(published[1]).status.message == message
        }
    }

    /// The read-state updates among `messages`, each checked to have come on its user's topic.
    static func readStates(_ messages: [Published]) throws -> [ReadStateUpdate] {
        try messages.map { message in
            let update = try ReadStateUpdate.decode(message[1])
            #expect(message[0] == frame(Partitioning.userTopic(for: update.change.user)))
            return update
        }
    }

    /// Sends raw query bodies on a REQ socket, one at a time, and decodes the replies.
    static func ask(_ requester: ZMQSocket, _ body: [UInt8]) throws -> QueryReply {
        _ = try requester.send([body])
        guard let reply = try requester.receiveMultipart(), let last = reply.last else {
            throw IntegrationError("no query reply within 5 s")
        }
        return try QueryReply.decode(last)
    }

    /// A raw REQ socket on the daemon's query endpoint.
    static func requester(_ daemon: ReceiptdProcess) throws -> ZMQSocket {
        // A raw socket: it tests the wire contract itself (query bodies no client sends).
        let requester = try ZMQSocket(context: daemon.context, type: .req)
        try requester.setReceiveTimeout(milliseconds: 5000)
        try requester.connect(daemon.queryEndpoint)
        return requester
    }

    @Test("A subscriber of \"u:\" gets every user's read states, private ones included, and no conversation's update")
    func userPrefixGetsReadStatesOnly() async throws {
        let daemon = try await ReceiptdProcess()
        let (group, direct) = ("rs-group", "rs-direct")
        _ = try await daemon.client.send([
            .conversationUpserted(conversation: group, kind: .group, members: ["ann", "bob", "cem"]),
            .conversationUpserted(conversation: direct, kind: .direct, members: ["ann", "bob"]),
            .conversationReceiptPrivacy(conversation: group, user: "cem", shareReads: false),
        ])
        let socket = try Self.subscriber(daemon, prefixes: [Partitioning.userTopicPrefix])
        defer { socket.close() }
        var messages = try await Self.attachByReadState(socket, daemon, probe: "rs-probe")
        for kinds: [EventKind] in [
            [
                .messageSent(conversation: group, message: "m1", sender: "ann", isSystem: false),
                .messageSent(conversation: direct, message: "d1", sender: "ann", isSystem: false),
                .delivered(conversation: group, user: "bob", message: "m1"),
            ],
            [.read(conversation: group, user: "bob", message: "m1")],
            [.read(conversation: group, user: "cem", message: "m1")],
            [.read(conversation: direct, user: "bob", message: nil)],
            [.markedUnread(conversation: group, user: "bob")],
            [.markedUnread(conversation: direct, user: "ann")],
        ] {
            _ = try await daemon.client.send(kinds)
        }
        let rest = try Self.receive(socket, until: Self.on(Partitioning.userTopic(for: "ann")))
        #expect(rest.done, "ann's read state arrived")
        messages += rest.messages

        #expect(
            messages.allSatisfy { $0[0].starts(with: Array(Partitioning.userTopicPrefix.utf8)) },
            "only user topics"
        )
        let updates = try Self.readStates(messages).filter { !$0.change.user.hasPrefix("probe-") }
        // The users' topics have a run of their own: the worker's, moved on when numbering
        // started (here when this socket's subscription arrived).
        let workerRun = try await daemon.health().publisherRun
        let run = try #require(updates.first?.publisherRun)
        #expect(updates.allSatisfy { $0.publisherRun == run })
        #expect(run != workerRun)
        #expect(updates.map(\.change.user) == ["bob", "cem", "bob", "bob", "ann"])
        // The users' joins came before anyone followed a user topic: they were not numbered.
        #expect(updates.map(\.sequence) == [1, 1, 2, 3, 1])
        #expect(
            updates.map(\.change.state) == [
                UnreadCount(conversation: group, unread: 0, isMarkedUnread: false, readUpTo: 1),
                UnreadCount(conversation: group, unread: 0, isMarkedUnread: false, readUpTo: 1),
                UnreadCount(conversation: direct, unread: 0, isMarkedUnread: false, readUpTo: 1),
                UnreadCount(conversation: group, unread: 0, isMarkedUnread: true, readUpTo: 1),
                UnreadCount(conversation: direct, unread: 0, isMarkedUnread: true, readUpTo: 0),
            ]
        )
        // The per-user snapshot continues the stream where it stands.
        let requester = try Self.requester(daemon)
        defer { requester.close() }
        let bob = try Self.ask(requester, Query.unreadCounts(user: "bob", conversations: []).encode())
        guard case .unreadCounts(let counts, let publisherRun, let sequence, _) = bob else {
            Issue.record("unexpected reply \(bob)")
            return
        }
        #expect(publisherRun == run)
        #expect(sequence == 3)
        #expect(Set(counts) == [updates[2].change.state, updates[3].change.state])
        #expect(try await daemon.counter("receiptd.read_states.published") >= UInt64(updates.count))
    }

    @Test("Conversation prefixes, one partition's or all sixteen hex digits, never match a user's topic")
    func conversationPrefixesGetNoReadState() async throws {
        let daemon = try await ReceiptdProcess()
        let group = "rs-partition"
        let digits = Partitioning.hexPartition(of: group)
        // A user whose topic carries the same four digits as the conversation's.
        let twin = try #require(
            (0..<2_000_000).lazy.map { "twin-\($0)" }.first { Partitioning.hexPartition(of: $0) == digits }
        )
        #expect(Partitioning.userTopic(for: twin) == "u:\(digits):\(twin)")
        let allDigits = try Self.subscriber(daemon, prefixes: Partitioning.conversationTopicPrefixes)
        defer { allDigits.close() }
        let partition = try Self.subscriber(daemon, prefixes: ["\(digits):"])
        defer { partition.close() }
        // A third subscriber follows every user, so that the worker does publish read states.
        let users = try Self.subscriber(daemon, prefixes: [Partitioning.userTopicPrefix])
        defer { users.close() }
        _ = try await Self.attachByReadState(users, daemon, probe: "rs-users-probe")
        _ = try await daemon.client.send(
            .conversationUpserted(conversation: group, kind: .group, members: ["ann", twin, "0000:x"])
        )
        var received = try await Self.attach(
            allDigits,
            daemon,
            attempt: Self.probe("rs-probe"),
            arrived: Self.on(Partitioning.topic(for: "rs-probe"))
        )
        var inPartition = try await Self.attach(
            partition,
            daemon,
            attempt: { [.messageSent(conversation: group, message: "attach-\($0)", sender: "ann", isSystem: false)] },
            arrived: Self.on(Partitioning.topic(for: group))
        )
        _ = try await daemon.client.send([
            .read(conversation: group, user: twin, message: nil),
            .read(conversation: group, user: "0000:x", message: nil),
            .markedUnread(conversation: group, user: twin),
            .memberLeft(conversation: group, user: "0000:x"),
            .messageSent(conversation: group, message: "end", sender: "ann", isSystem: false),
        ])
        let rest = try Self.receive(allDigits, until: Self.status(of: "end", in: group))
        let restInPartition = try Self.receive(partition, until: Self.status(of: "end", in: group))
        #expect(rest.done && restInPartition.done, "the last message's status arrived on both")
        received += rest.messages
        inPartition += restInPartition.messages
        for message in received + inPartition {
            #expect(
                !message[0].starts(with: Array(Partitioning.userTopicPrefix.utf8)),
                "\(String(decoding: message[0], as: UTF8.self))"
            )
            #expect(throws: Never.self) { try StatusUpdate.decode(message[1]) }
        }
        #expect(inPartition.allSatisfy { $0[0].starts(with: Array("\(digits):".utf8)) })
        // The daemon did publish the read states, on the users' topics.
        #expect(try await daemon.counter("receiptd.read_states.published") >= 4)
        let usersRest = try Self.receive(users, until: Self.on(Partitioning.userTopic(for: "0000:x")))
        #expect(usersRest.done, "the read states went out on the users' topics")
    }

    /// An id that extends `id` and shares its partition digits, so that `id`'s topic is a prefix
    /// of its topic.
    static func longer(than id: String) throws -> String {
        let digits = Partitioning.hexPartition(of: id)
        return try #require(
            (0..<2_000_000).lazy.map { "\(id)-\($0)" }.first { Partitioning.hexPartition(of: $0) == digits }
        )
    }

    @Test("A subscription to a whole topic frame gets that one user or conversation; a topic as a prefix still works")
    func exactTopicsAreExact() async throws {
        let daemon = try await ReceiptdProcess()
        let (user, group) = ("px56283", "xc")
        let (longerUser, longerGroup) = (try Self.longer(than: user), try Self.longer(than: group))
        _ = try await daemon.client.send([
            .conversationUpserted(conversation: group, kind: .group, members: ["ann", user, longerUser]),
            .conversationUpserted(conversation: longerGroup, kind: .group, members: ["ann", user, longerUser]),
        ])
        // A gateway in another language: the whole frame, NUL included, as the filter.
        let exact = try Self.subscriber(
            daemon,
            prefixes: [
                Partitioning.exactUserTopic(for: user), Partitioning.exactTopic(for: group),
                Partitioning.exactUserTopic(for: "probe-b"),
            ]
        )
        defer { exact.close() }
        // A gateway of an earlier release: the topic without the NUL, a prefix of the frame.
        let legacy = try Self.subscriber(
            daemon,
            prefixes: [
                Partitioning.userTopic(for: user), Partitioning.topic(for: group),
                Partitioning.userTopic(for: "probe-b"),
            ]
        )
        defer { legacy.close() }
        _ = try await Self.attachByReadState(exact, daemon, probe: "xc-probe")
        _ = try await Self.attachByReadState(legacy, daemon, probe: "xc-probe")
        _ = try await daemon.client.send([
            .messageSent(conversation: longerGroup, message: "l1", sender: "ann", isSystem: false),
            .read(conversation: longerGroup, user: longerUser, message: "l1"),
            .read(conversation: longerGroup, user: user, message: "l1"),
            .messageSent(conversation: group, message: "m1", sender: "ann", isSystem: false),
            .read(conversation: group, user: longerUser, message: "m1"),
            .read(conversation: group, user: user, message: "m1"),
        ])
        _ = try await daemon.client.send(
            .messageSent(conversation: group, message: "end", sender: "ann", isSystem: false)
        )
        let ours = [Self.frame(Partitioning.userTopic(for: user)), Self.frame(Partitioning.topic(for: group))]
        let theirs = [
            Self.frame(Partitioning.userTopic(for: longerUser)), Self.frame(Partitioning.topic(for: longerGroup)),
        ]
        let probes = Self.frame(Partitioning.userTopic(for: "probe-b"))

        let exactly = try Self.receive(exact, until: Self.status(of: "end", in: group))
        #expect(exactly.done, "the last status arrived")
        let exactTopics = Set(exactly.messages.map { $0[0] }.filter { $0 != probes })
        #expect(exactTopics == Set(ours), "\(exactTopics.map { String(decoding: $0, as: UTF8.self) })")
        // Every frame decodes by its topic, and each update names the id of its topic.
        for message in exactly.messages where message[0] != probes {
            let update = try message[0].withUnsafeBytes { topic in
                try message[1].withUnsafeBytes { try PublishedUpdate.decode(topic: topic, body: $0) }
            }
            switch update {
            case .status(let status): #expect(status.status.conversation == group)
            case .readState(let readState): #expect(readState.change.user == user)
            }
        }

        let byPrefix = try Self.receive(legacy, until: Self.status(of: "end", in: group))
        #expect(byPrefix.done, "the last status arrived by prefix too")
        let prefixTopics = Set(byPrefix.messages.map { $0[0] }.filter { $0 != probes })
        #expect(prefixTopics == Set(ours + theirs), "a topic as a prefix matches the longer ids as it always did")
    }

    @Test(
        "A device whose snapshot was answered before its subscription arrived is told it missed a read",
        arguments: [false, true]
    )
    func aSnapshotThatRacedItsSubscriptionIsRepaired(othersFollowUsers: Bool) async throws {
        let daemon = try await ReceiptdProcess()
        let group = "rs-race"
        _ = try await daemon.client.send([
            .conversationUpserted(conversation: group, kind: .group, members: ["ann", "dana"]),
            .messageSent(conversation: group, message: "m1", sender: "ann", isSystem: false),
            .messageSent(conversation: group, message: "m2", sender: "ann", isSystem: false),
        ])
        // Another gateway follows every user (the read below is then numbered), or nobody does
        // (it is numbered nowhere).
        let others = try Self.subscriber(daemon, prefixes: othersFollowUsers ? [Partitioning.userTopicPrefix] : [])
        defer { others.close() }
        if othersFollowUsers { _ = try await Self.attachByReadState(others, daemon, probe: "rs-race-probe") }
        // The device: a raw XSUB, so that the test decides when its subscription reaches the worker.
        let device = try ZMQSocket(context: daemon.context, type: .xsub)
        defer { device.close() }
        try device.connect(daemon.publishEndpoint)
        let requester = try Self.requester(daemon)
        defer { requester.close() }
        let query = Query.unreadCounts(user: "dana", conversations: []).encode()
        guard case .unreadCounts(let counts, let run, let sequence, _) = try Self.ask(requester, query) else {
            Issue.record("no unread counts")
            return
        }
        #expect(counts == [UnreadCount(conversation: group, unread: 2, isMarkedUnread: false, readUpTo: 0)])
        // dana reads on another device after the snapshot, before the subscription arrives.
        _ = try await daemon.client.send(.read(conversation: group, user: "dana", message: "m2"))
        #expect(try device.send([[1] + Array(Partitioning.exactUserTopic(for: "dana").utf8)], dontWait: false))
        // Nothing else happens, and yet the device learns that its snapshot is behind: by a new run
        // or a gap, or, when the read's own update was published only after the subscription
        // arrived (publishing follows the acknowledgement), by that update, next in order.
        let arrived = try Self.receive(device, timeoutMilliseconds: 5000) { _ in true }
        let update = try #require(try Self.readStates(arrived.messages).first, "an update on dana's topic")
        let read = UnreadCount(conversation: group, unread: 0, isMarkedUnread: false, readUpTo: 2)
        let inOrder = update.publisherRun == run && update.sequence == sequence + 1
        #expect(!inOrder || update.change.state == read, "next in order, it is the read")
        // The snapshot it takes then has the read and continues at the update, or after it when
        // the update was the read's own (the announcement follows it).
        guard case .unreadCounts(let repaired, let newRun, let newSequence, _) = try Self.ask(requester, query) else {
            Issue.record("no unread counts")
            return
        }
        #expect(repaired == [read])
        #expect(newRun == update.publisherRun)
        #expect(inOrder ? newSequence >= update.sequence : newSequence == update.sequence)
    }

    @Test("A private read reaches the reader's topic while the conversation's topic shows no read")
    func privateReadOnTheReadersTopicOnly() async throws {
        let daemon = try await ReceiptdProcess()
        let group = "rs-private"
        _ = try await daemon.client.send([
            .conversationUpserted(conversation: group, kind: .group, members: ["ann", "bob", "cem"]),
            .receiptPrivacy(user: "bob", shareReads: false),
            .messageSent(conversation: group, message: "m1", sender: "ann", isSystem: false),
        ])
        let conversation = try await daemon.subscribe(to: group)
        // A gateway serving bob: bob's topic first, then the probe user's, over one connection,
        // so that the probe's read state proves bob's topic subscribed too.
        let bobsTopic = Partitioning.userTopic(for: "bob")
        let devices = try Self.subscriber(daemon, prefixes: [bobsTopic, Partitioning.userTopic(for: "probe-b")])
        defer { devices.close() }
        var messages = try await Self.attachByReadState(devices, daemon, probe: "rs-probe")
        try devices.unsubscribe(Partitioning.userTopic(for: "probe-b"))

        _ = try await daemon.client.send(.read(conversation: group, user: "bob", message: "m1"))
        let bobs = try Self.receive(devices) { message in
            try Self.on(bobsTopic)(message) && ReadStateUpdate.decode(message[1]).change.state.readUpTo == 1
        }
        #expect(bobs.done, "bob's devices learn of the read")
        messages += bobs.messages
        // The last: the first may be the announcement of bob's state when the subscription arrived.
        let update = try #require(try Self.readStates(messages.filter(Self.on(bobsTopic))).last)
        #expect(
            update.change
                == ReadStateChange(
                    user: "bob",
                    state: UnreadCount(conversation: group, unread: 0, isMarkedUnread: false, readUpTo: 1),
                    time: update.change.time
                )
        )

        // cem reads in the open: the first read the conversation's topic shows is cem's.
        _ = try await daemon.client.send(.read(conversation: group, user: "cem", message: "m1"))
        let statuses = try conversation.updates { $0.status.readCount > 0 }
        #expect(statuses.dropLast().allSatisfy { $0.status.readCount == 0 && $0.status.readAt == nil })
        #expect(statuses.last?.status.readCount == 1)
        #expect(statuses.last?.status.deliveredCount == 2)
        let detail = try await daemon.client.readDetail(of: "m1", in: group)
        #expect(detail.read.map(\.user) == ["cem"])
        #expect(detail.delivered.map(\.user) == ["bob"])
        #expect(detail.delivered.first?.readAt == nil)
    }

    @Test("Raw paged ReadDetailQuery frames: odd cursors are refused, the worker serves on, every recipient once")
    func pagedReadDetailOverRawFrames() async throws {
        let daemon = try await ReceiptdProcess()
        let group = "rs-sheet"
        let recipients = (1..<50).map { "r\($0 < 10 ? "0" : "")\($0)" }
        _ = try await daemon.client.send([
            .conversationUpserted(conversation: group, kind: .group, members: ["s"] + recipients),
            .messageSent(conversation: group, message: "m1", sender: "s", isSystem: false),
            .messageSent(conversation: group, message: "m2", sender: "s", isSystem: false),
            .conversationUpserted(conversation: "rs-sheet-2", kind: .group, members: ["s"] + recipients),
            .messageSent(conversation: "rs-sheet-2", message: "m1", sender: "s", isSystem: false),
        ])
        var kinds: [EventKind] = []
        for (i, user) in recipients.enumerated() {
            switch i % 3 {
            case 0: kinds.append(.read(conversation: group, user: user, message: "m1"))
            case 1: kinds.append(.delivered(conversation: group, user: user, message: "m1"))
            default: break
            }
        }
        // A frame each, so that reads mostly differ in time (ties go by user id).
        for kind in kinds { _ = try await daemon.client.send(kind) }

        let requester = try Self.requester(daemon)
        defer { requester.close() }
        func sheet(
            pageSize: Int,
            cursor: String,
            message: String = "m1",
            conversation: String = group
        ) throws -> QueryReply {
            try Self.ask(
                requester,
                Query.readDetail(conversation: conversation, message: message, pageSize: pageSize, cursor: cursor)
                    .encode()
            )
        }
        guard case .readDetail(let whole) = try sheet(pageSize: 0, cursor: "") else {
            Issue.record("no whole sheet")
            return
        }
        let wholeLines = whole.read + whole.delivered + whole.notDelivered
        #expect(wholeLines.count == 49)
        #expect(whole.read.count == 17)
        #expect(whole.nextCursor == nil)

        for (pageSize, cursor) in [(10, "garbage"), (10, "1/5/"), (10, "9/1/r01"), (0, "2/0/r01"), (0, "garbage")] {
            guard case .error(let error) = try sheet(pageSize: pageSize, cursor: cursor) else {
                Issue.record("page size \(pageSize), cursor \(cursor) was answered")
                continue
            }
            #expect(error.code == .invalidArgument, "page size \(pageSize), cursor \(cursor): \(error)")
            // The worker goes on serving, on the same connection.
            guard case .readDetail(let again) = try sheet(pageSize: 0, cursor: "") else {
                Issue.record("no sheet after a refused cursor")
                continue
            }
            #expect(again == whole)
        }

        // A gateway passes next_cursor back as it came, until there is none.
        var shown: [RecipientReceipt] = []
        var cursor = ""
        var pages = 0
        repeat {
            guard case .readDetail(let page) = try sheet(pageSize: 7, cursor: cursor) else {
                Issue.record("page \(pages) was not answered")
                break
            }
            let lines = page.read + page.delivered + page.notDelivered
            #expect(lines.count == 7)
            #expect(page.status == whole.status)
            shown += lines
            cursor = page.nextCursor ?? ""
            pages += 1
        } while !cursor.isEmpty && pages < 20
        #expect(pages == 7)
        #expect(shown == wholeLines)
        #expect(Set(shown.map(\.user)) == Set(recipients))

        // A next_cursor is good for the sheet it came from only (the proto's INVALID_ARGUMENT):
        // not for another message or conversation, not cut, doubled, changed or made up, and not
        // in the plain "<list>/<read ms>/<user>" form of earlier releases.
        guard case .readDetail(let first) = try sheet(pageSize: 7, cursor: ""), let token = first.nextCursor else {
            Issue.record("no first page with a cursor")
            return
        }
        guard case .readDetail = try sheet(pageSize: 7, cursor: token) else {
            Issue.record("the cursor of m1's first page was refused on m1")
            return
        }
        let lastReader = first.read.last?.user ?? ""
        let changed = String(token.dropLast()) + (token.last == "A" ? "B" : "A")
        let refused: [(message: String, conversation: String, cursor: String)] = [
            ("m2", group, token),
            ("m1", "rs-sheet-2", token),
            ("m1", group, String(token.dropLast())),
            ("m1", group, String(token.dropFirst())),
            ("m1", group, token + token),
            ("m1", group, changed),
            ("m1", group, "1/9999999999999/zzz"),
            ("m1", group, "1/\(first.read.last?.readAt?.milliseconds ?? 0)/\(lastReader)"),
        ]
        for (message, conversation, cursor) in refused {
            guard
                case .error(let error) = try sheet(
                    pageSize: 7,
                    cursor: cursor,
                    message: message,
                    conversation: conversation
                )
            else {
                Issue.record("cursor \(cursor) was answered for \(message) in \(conversation)")
                continue
            }
            #expect(error.code == .invalidArgument, "\(cursor) for \(message) in \(conversation): \(error)")
        }
    }

    @Test(
        "A daemon told to publish no read states publishes none",
        arguments: [(["--no-read-state-updates"], [:]), ([], ["RECEIPTD_NO_READ_STATE_UPDATES": "1"])]
    )
    func readStatesOff(arguments: [String], environment: [String: String]) async throws {
        let daemon = try await ReceiptdProcess(arguments: arguments, environment: environment)
        let group = "rs-off"
        // "u:" first, then the probe conversation: the probe's status proves "u:" subscribed.
        let socket = try Self.subscriber(
            daemon,
            prefixes: [Partitioning.userTopicPrefix, Partitioning.topic(for: "rs-probe")]
        )
        defer { socket.close() }
        var messages = try await Self.attach(
            socket,
            daemon,
            attempt: Self.probe("rs-probe"),
            arrived: Self.on(Partitioning.topic(for: "rs-probe"))
        )
        _ = try await daemon.client.send([
            .conversationUpserted(conversation: group, kind: .group, members: ["ann", "bob", "cem"]),
            .messageSent(conversation: group, message: "m1", sender: "ann", isSystem: false),
            .read(conversation: group, user: "bob", message: "m1"),
            .markedUnread(conversation: group, user: "cem"),
            .memberLeft(conversation: group, user: "cem"),
        ])
        _ = try await daemon.client.send(
            .messageSent(conversation: "rs-probe", message: "end", sender: "probe-a", isSystem: false)
        )
        let rest = try Self.receive(socket, until: Self.status(of: "end", in: "rs-probe"))
        #expect(rest.done)
        messages += rest.messages
        #expect(
            !messages.contains { $0[0].starts(with: Array(Partitioning.userTopicPrefix.utf8)) },
            "no read state was published"
        )
        #expect(try await daemon.counter("receiptd.read_states.published") == 0)
        let bob = try await daemon.client.unreadCounts(for: "bob")
        #expect(bob.first { $0.conversation == group }?.readUpTo == 1, "the state is kept all the same")
    }

    @Test("Read states nobody follows are not published; following one user's topic starts them, leaving stops them")
    func unfollowedUserTopicsArePublishedOnlyWhileFollowed() async throws {
        let daemon = try await ReceiptdProcess()
        let group = "rs-followed"
        _ = try await daemon.client.send([
            .conversationUpserted(conversation: group, kind: .group, members: ["ann", "bob", "cem"]),
            .messageSent(conversation: group, message: "m1", sender: "ann", isSystem: false),
            .read(conversation: group, user: "bob", message: "m1"),
        ])
        // No subscriber at all: the reads are kept, and nothing is numbered or sent.
        #expect(try await daemon.counter("receiptd.read_states.published") == 0)
        #expect(try await daemon.client.unreadCounts(for: "bob").first?.readUpTo == 1)

        // A gateway with bob's device online follows bob's topic exactly.
        let socket = try Self.subscriber(daemon, prefixes: [Partitioning.userTopic(for: "bob")])
        let messages = try await Self.attach(
            socket,
            daemon,
            attempt: { i in
                [
                    .messageSent(conversation: group, message: "a\(i)", sender: "ann", isSystem: false),
                    .read(conversation: group, user: "bob", message: "a\(i)"),
                    .read(conversation: group, user: "cem", message: "a\(i)"),
                ]
            },
            arrived: Self.on(Partitioning.userTopic(for: "bob"))
        )
        let bobs = try Self.readStates(messages)
        #expect(bobs.allSatisfy { $0.change.user == "bob" }, "only bob's topic reaches this subscriber")
        let published = try await daemon.counter("receiptd.read_states.published")
        #expect(published > 0)

        // Once no subscriber is left, the worker stops handing read states over (it notices within 100 ms).
        socket.close()
        try await Task.sleep(for: .milliseconds(500))
        let afterLeaving = try await daemon.counter("receiptd.read_states.published")
        _ = try await daemon.client.send([
            .messageSent(conversation: group, message: "z1", sender: "ann", isSystem: false),
            .read(conversation: group, user: "bob", message: "z1"),
        ])
        #expect(try await daemon.counter("receiptd.read_states.published") == afterLeaving)
        #expect(try await daemon.client.unreadCounts(for: "bob").first?.unread == 0, "the read is kept")
    }

    @Test(
        "Odd messages to the worker's XPUB (no subscription byte, empty, two frames) change nothing; a raw subscription works"
    )
    func oddMessagesToTheXPUBAreIgnored() async throws {
        let daemon = try await ReceiptdProcess()
        // A raw XSUB: its subscriptions, and anything else, are messages it sends to the XPUB.
        let socket = try ZMQSocket(context: daemon.context, type: .xsub)
        defer { socket.close() }
        try socket.connect(daemon.publishEndpoint)
        let userPrefix = Array(Partitioning.userTopicPrefix.utf8)
        for odd: [[UInt8]] in [[[7] + userPrefix], [[]], [[1] + userPrefix, Array("x".utf8)], [[0] + userPrefix]] {
            #expect(try socket.send(odd, dontWait: false))
        }
        try await Task.sleep(for: .milliseconds(300))
        _ = try await daemon.client.send(Self.probe("rs-odd-probe")(1))
        #expect(try await daemon.counter("receiptd.read_states.published") == 0, "none of them followed a user topic")
        #expect(try await daemon.health().state == "serving")

        // A well-formed subscription of every user's topic, sent the same raw way.
        #expect(try socket.send([[1] + userPrefix], dontWait: false))
        let messages = try await Self.attach(
            socket,
            daemon,
            attempt: { Self.probe("rs-odd-probe")($0 + 1) },
            arrived: Self.on(Partitioning.userTopic(for: "probe-b"))
        )
        #expect(messages.allSatisfy { $0[0].starts(with: userPrefix) })
        #expect(try await daemon.counter("receiptd.read_states.published") > 0)
    }
}
