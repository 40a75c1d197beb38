import PropertyBased
import ReceiptsCore
import Testing

/// Threads (issue 31): a reply has its own status and sheet, counts in its thread and never in
/// the conversation, and is read in its thread only (Matrix MSC3771); followers are told.
struct ThreadTests {
    /// A group g of A, B, C and D, with m1 from A in the main timeline.
    static func group() -> EngineHarness {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D"])
        h.send("g", "m1", from: "A")
        return h
    }

    @discardableResult
    static func reply(
        _ h: inout EngineHarness,
        _ message: String,
        from sender: String,
        in thread: String = "m1",
        naming users: [String] = []
    ) -> ApplyResult {
        h.accept(
            .messageSent(
                conversation: "g",
                message: message,
                sender: sender,
                isSystem: false,
                mentions: Mentions(users: users),
                thread: thread
            )
        )
    }

    static func thread(_ h: EngineHarness, _ user: String, _ root: String = "m1") -> ThreadReadState? {
        h.engine.threadReadStates(user: user, conversations: ["g"]).first { $0.thread == root }
    }

    @Test func aReplyHasItsOwnStatusAndIsReadInItsThreadOnly() {
        var h = Self.group()
        Self.reply(&h, "r1", from: "B")
        #expect(h.status("g", "r1").threadRoot == "m1")
        #expect(h.status("g", "r1").recipientCount == 3)
        #expect(h.status("g", "m1").threadRoot == nil)

        // A read of the main timeline covers m1, not the reply.
        h.read("g", "C", nil)
        #expect(h.status("g", "m1").readCount == 1)
        #expect(h.status("g", "r1").readCount == 0 && h.status("g", "r1").deliveredCount == 0)
        #expect(h.unread("C", "g").unread == 0, "a reply never counts in the conversation")

        // A read of the reply, with or without its thread named, covers the reply only.
        h.read("g", "A", "r1")
        #expect(h.status("g", "r1").readCount == 1)
        #expect(h.unread("A", "g").readUpTo == 0, "A's main watermark did not move")
        #expect(h.status("g", "m1").readCount == 1)
        h.accept(.read(conversation: "g", user: "C", message: nil, thread: "m1"))
        h.accept(.delivered(conversation: "g", user: "D", message: "r1", thread: "m1"))
        let status = h.status("g", "r1")
        #expect(status.readCount == 2 && status.deliveredCount == 3 && status.status == .readBySome)
        let sheet = h.detail("g", "r1")
        #expect(sheet.read.map(\.user).sorted() == ["A", "C"] && sheet.delivered.map(\.user) == ["D"])
    }

    @Test func repliesCountInTheirThreadAndTheConversationCountsUnreadThreads() {
        var h = Self.group()
        let first = Self.reply(&h, "r1", from: "B")
        // The root's sender follows with the first reply; the replier follows; they are told.
        #expect(first.readStates.compactMap(\.thread?.thread) == ["m1"])
        #expect(first.readStates.map(\.user) == ["A"])
        #expect(
            Self.thread(h, "A")
                == ThreadReadState(
                    conversation: "g",
                    thread: "m1",
                    unread: 1,
                    unreadMentions: 0,
                    readUpTo: 0,
                    isFollowing: true
                )
        )
        #expect(Self.thread(h, "B")?.unread == 0 && Self.thread(h, "B")?.isFollowing == true)
        #expect(Self.thread(h, "C") == nil, "C holds no place in the thread")
        #expect(h.unread("A", "g").unreadThreads == 1)
        #expect(h.unread("A", "g").unread == 0)

        let second = Self.reply(&h, "r2", from: "C", naming: ["D"])
        #expect(second.readStates.map(\.user).sorted() == ["A", "B", "D"], "the followers, and D, now one")
        #expect(Self.thread(h, "D")?.unreadMentions == 1 && Self.thread(h, "D")?.unread == 2)
        #expect(h.unread("D", "g").unreadMentions == 0, "a mention in a thread counts in the thread")

        let read = h.accept(.read(conversation: "g", user: "A", message: "r2", thread: "m1"))
        #expect(read.readStates.count == 1 && read.readStates.first?.thread?.unread == 0)
        #expect(read.readStates.first?.state.unreadThreads == 0, "the conversation's state comes with it")
        #expect(h.unread("A", "g").unreadThreads == 0)
    }

    @Test func followingAndUnfollowingAreToldAndAThreadReadElsewhereShows() {
        var h = Self.group()
        Self.reply(&h, "r1", from: "B")
        let follow = h.accept(.threadFollowed(conversation: "g", user: "D", thread: "m1", follows: true))
        #expect(follow.readStates.first?.thread?.isFollowing == true)
        #expect(h.unread("D", "g").unreadThreads == 1)
        #expect(h.accept(.threadFollowed(conversation: "g", user: "D", thread: "m1", follows: true)).readStates.isEmpty)
        let unfollow = h.accept(.threadFollowed(conversation: "g", user: "D", thread: "r1", follows: false))
        #expect(unfollow.readStates.first?.thread?.isFollowing == false, "a reply's id names its thread")
        #expect(h.unread("D", "g").unreadThreads == 0)
        // A thread read on another device shows in the state a device starts from: read, listed.
        h.read("g", "A", "r1")
        #expect(Self.thread(h, "A")?.unread == 0 && Self.thread(h, "A")?.readUpTo == 2)
        #expect(
            Self.thread(h, "D")
                == ThreadReadState(
                    conversation: "g",
                    thread: "m1",
                    unread: 1,
                    unreadMentions: 0,
                    readUpTo: 0,
                    isFollowing: false
                )
        )
    }

    @Test func aReplyToAReplyJoinsItsThreadAndOddThreadsAreRejected() {
        var h = Self.group()
        Self.reply(&h, "r1", from: "B")
        Self.reply(&h, "r2", from: "C", in: "r1")
        #expect(h.status("g", "r2").threadRoot == "m1")
        #expect(
            h.rejection(.messageSent(conversation: "g", message: "r3", sender: "C", isSystem: false, thread: "nope"))
                == .unknownMessage
        )
        #expect(h.rejection(.read(conversation: "g", user: "C", message: "m1", thread: "m1")) == .invalidEvent)
        #expect(h.rejection(.read(conversation: "g", user: "C", message: nil, thread: "nope")) == .unknownMessage)
        #expect(h.rejection(.read(conversation: "g", user: "B", message: "r1", thread: "m1")) == .notARecipient)
        #expect(h.rejection(.threadFollowed(conversation: "g", user: "E", thread: "m1", follows: true)) == .notAMember)
        #expect(h.rejection(.delivered(conversation: "g", user: "C", message: "", thread: nil)) == .invalidEvent)
    }

    /// A receipt naming a thread and a message not yet known is held with its thread: applied
    /// in that thread if the message arrives as one of its replies, discarded (and counted) if
    /// it arrives anywhere else, as the same receipt arriving after its message is rejected.
    @Test func aHeldReceiptKeepsItsThreadThroughASnapshot() throws {
        var h = Self.group()
        h.send("g", "m2", from: "A")
        for (message, user) in [("r1", "C"), ("x1", "C"), ("x2", "D")] {
            let held = h.apply(.read(conversation: "g", user: user, message: message, thread: "m1"))
            #expect(held.outcome == .accepted(held: true))
        }
        h.engine = try ReceiptEngine(restoringFrom: h.engine.encodedState(), configuration: .init())

        Self.reply(&h, "r1", from: "B")
        #expect(h.status("g", "r1").readCount == 1, "held in m1's thread, applied there")
        h.send("g", "x1", from: "B")
        #expect(h.status("g", "x1").readCount == 0, "a main-timeline message is not a reply in m1's thread")
        #expect(h.unread("C", "g").readUpTo == 0, "C's main watermark did not move")
        Self.reply(&h, "x2", from: "B", in: "m2")
        #expect(h.status("g", "x2").readCount == 0, "a reply in m2's thread is not one in m1's")
        #expect(h.engine.counters.heldReceipts == 0)
        #expect(h.engine.counters.discardedHeldReceipts == 2)
    }

    @Test func leavingDropsUnreadRepliesFromTheCountsAndRejoiningKeepsTheOldOnesFrozen() {
        var h = Self.group()
        Self.reply(&h, "r1", from: "B")
        h.read("g", "A", "r1")
        h.accept(.memberLeft(conversation: "g", user: "C"))
        h.accept(.memberLeft(conversation: "g", user: "D"))
        let status = h.status("g", "r1")
        #expect(status.recipientCount == 1 && status.status == .readByAll)
        h.accept(.memberJoined(conversation: "g", user: "C"))
        // C's read of a reply from before their return moves their own watermark only.
        let own = h.accept(.read(conversation: "g", user: "C", message: "r1"))
        #expect(own.changes.isEmpty && h.status("g", "r1").readCount == 1)
        #expect(own.readStates.first?.thread?.readUpTo == 2)
        Self.reply(&h, "r2", from: "B")
        h.read("g", "C", "r2")
        #expect(h.status("g", "r2").readCount == 1)
        #expect(h.detail("g", "r1").read.map(\.user) == ["A"], "r1's sheet is as C left it")
    }

    @Test func aSnapshotKeepsThreadsRetentionDropsThemAndVersion4RestoresWithout() throws {
        var h = Self.group()
        Self.reply(&h, "r1", from: "B", naming: ["C"])
        h.accept(.threadFollowed(conversation: "g", user: "D", thread: "m1", follows: true))
        h.read("g", "A", "r1")
        let restored = try ReceiptEngine(restoringFrom: h.engine.encodedState(), configuration: .init())
        #expect(restored.encodedState() == h.engine.encodedState())
        for user in ["A", "B", "C", "D"] {
            #expect(
                restored.threadReadStates(user: user, conversations: ["g"])
                    == h.engine.threadReadStates(user: user, conversations: ["g"])
            )
        }
        #expect(restored.readDetail(conversation: "g", message: "r1") == h.detail("g", "r1"))
        let old = try ReceiptEngine(restoringFrom: h.engine.encodedState(version: 4), configuration: .init())
        #expect(old.threadReadStates(user: "A", conversations: ["g"]).isEmpty)

        h.accept(.messageSent(conversation: "g", message: "m2", sender: "A", isSystem: false), after: 100_000)
        #expect(h.engine.expireMessages(sentBefore: Timestamp(milliseconds: h.now - 50_000)) == 2)
        #expect(h.engine.threadReadStates(user: "D", conversations: ["g"]).isEmpty, "root and reply expired")
        let afterRetention = try ReceiptEngine(restoringFrom: h.engine.encodedState(), configuration: .init())
        #expect(afterRetention.encodedState() == h.engine.encodedState())
    }

    /// Found by review: two memberships of C ending at the same sequence (the second with no
    /// message) must not let the second's thread read show on a reply of the first.
    @Test func aMembershipWithNoMessageChangesNoReplySheet() {
        var h = Self.group()
        Self.reply(&h, "r1", from: "B")
        h.accept(.memberLeft(conversation: "g", user: "C"))
        h.accept(.memberJoined(conversation: "g", user: "C"))
        h.accept(.read(conversation: "g", user: "C", message: nil, thread: "m1"))
        h.accept(.memberLeft(conversation: "g", user: "C"))
        let sheet = h.detail("g", "r1")
        #expect(sheet.read.isEmpty && sheet.status.readCount == 0)
        #expect(sheet.read.count + sheet.delivered.count + sheet.notDelivered.count == sheet.status.recipientCount)
    }

    @Test func lastSentIsTheLatestMainTimelineMessage() {
        var h = Self.group()
        h.send("g", "m2", from: "B")
        Self.reply(&h, "r1", from: "B")
        #expect(h.engine.lastSent(conversation: "g", sender: "B")?.message == "m2")
    }

    @Test func deletingAReplyTellsTheFollowersWhoHadNotReadItAndLeaversAreToldNothing() {
        var h = Self.group()
        Self.reply(&h, "r1", from: "B")
        h.accept(.threadFollowed(conversation: "g", user: "D", thread: "m1", follows: true))
        h.read("g", "D", "r1")
        let deleted = h.accept(.messageDeleted(conversation: "g", message: "r1"))
        #expect(deleted.readStates.map(\.user) == ["A"], "A had not read it; D had; B sent it")
        #expect(deleted.readStates.first?.thread?.unread == 0)
        h.accept(.memberLeft(conversation: "g", user: "A"))
        let reply = Self.reply(&h, "r2", from: "C")
        #expect(reply.readStates.map(\.user).sorted() == ["B", "D"], "A left: nothing of the thread reaches them")
    }

    // MARK: - Against a model

    /// Random main messages, replies (to a main message, or to a reply), reads of the main
    /// timeline, of a reply (with or without its thread), of a whole thread, follows and
    /// deletions in a group of four: after every event the main unread counts, the threads with
    /// unread replies and each thread's unread count and following equal a model recomputed from
    /// the accepted events.
    @Test func threadCountsEqualAModelRecomputedFromTheEvents() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int(Int32.max)).array(of: 1...60)) { values in
            var h = EngineHarness()
            h.group("g", ["A", "B", "C", "D"])
            let users = ["A", "B", "C", "D"]
            var model = ThreadModel()
            for value in values {
                var x = value
                func take(_ n: Int) -> Int {
                    defer { x /= n }
                    return x % n
                }
                let user = users[take(users.count)]
                let pick = model.messages.isEmpty ? nil : "m\(take(model.messages.count) + 1)"
                let kind: EventKind
                switch take(10) {
                case 0, 1:
                    kind = .messageSent(
                        conversation: "g",
                        message: "m\(model.messages.count + 1)",
                        sender: user,
                        isSystem: false
                    )
                case 2, 3:
                    kind = .messageSent(
                        conversation: "g",
                        message: "m\(model.messages.count + 1)",
                        sender: user,
                        isSystem: false,
                        thread: pick ?? "m0"
                    )
                case 4:
                    kind = .read(conversation: "g", user: user, message: take(3) == 0 ? nil : pick)
                case 5:
                    kind = .read(
                        conversation: "g",
                        user: user,
                        message: pick,
                        thread: take(2) == 0 ? nil : model.root(of: pick)
                    )
                case 6:
                    kind = .read(conversation: "g", user: user, message: nil, thread: pick)
                case 7:
                    kind = .threadFollowed(conversation: "g", user: user, thread: pick ?? "m0", follows: take(2) == 0)
                case 8:
                    kind = .messageDeleted(conversation: "g", message: pick ?? "m0")
                default:
                    kind = .delivered(conversation: "g", user: user, message: pick ?? "m0")
                }
                let result = h.apply(kind)
                if case .accepted = result.outcome { model.apply(kind) }
                for user in users {
                    let counts = h.unread(user, "g")
                    #expect(counts.unread == model.unread(user), "\(user)'s unread after \(kind)")
                    #expect(counts.unreadThreads == model.unreadThreads(user), "\(user)'s threads after \(kind)")
                    for state in h.engine.threadReadStates(user: user, conversations: ["g"]) {
                        #expect(
                            state.unread == model.unread(user, inThread: state.thread),
                            "\(user) in \(state.thread)"
                        )
                        #expect(
                            state.isFollowing == model.follows(user, state.thread),
                            "\(user) follows \(state.thread)"
                        )
                    }
                }
            }
        }
    }
}

/// The read state of a group of A–D with threads, recomputed from accepted events.
private struct ThreadModel {
    struct Message {
        var sender: String
        /// The thread's root for a reply.
        var root: String?
        var isDeleted = false
    }

    /// Messages by sequence - 1 (ids are "m<sequence>").
    var messages: [Message] = []
    var mainReadUpTo: [String: Int] = [:]
    /// (user, root) -> read up to (a sequence).
    var threadReadUpTo: [String: Int] = [:]
    /// "user root" pairs that follow.
    var following: Set<String> = []

    static func sequence(_ id: String) -> Int { Int(id.dropFirst())! }

    /// The root of the thread `id` belongs to or starts, as the engine normalizes it.
    func root(of id: String?) -> String? {
        guard let id, Self.sequence(id) >= 1, Self.sequence(id) <= messages.count else { return id }
        return messages[Self.sequence(id) - 1].root ?? id
    }

    mutating func apply(_ kind: EventKind) {
        switch kind {
        case .messageSent(_, _, let sender, _, _, let thread):
            let root = root(of: thread)
            messages.append(Message(sender: sender, root: root))
            if let root {
                following.insert("\(sender) \(root)")
                if !messages.dropLast().contains(where: { $0.root == root }) {
                    following.insert("\(messages[Self.sequence(root) - 1].sender) \(root)")
                }
            }
        case .read(_, let user, let message, let thread):
            if let message, let root = messages[Self.sequence(message) - 1].root {
                threadReadUpTo["\(user) \(root)", default: 0] = max(
                    threadReadUpTo["\(user) \(root)"] ?? 0,
                    Self.sequence(message)
                )
            } else if let message {
                mainReadUpTo[user] = max(mainReadUpTo[user] ?? 0, Self.sequence(message))
            } else if let thread, let root = root(of: thread) {
                let last = messages.indices.last { messages[$0].root == root }.map { $0 + 1 } ?? 0
                threadReadUpTo["\(user) \(root)", default: 0] = max(threadReadUpTo["\(user) \(root)"] ?? 0, last)
            } else {
                mainReadUpTo[user] = max(mainReadUpTo[user] ?? 0, messages.count)
            }
        case .threadFollowed(_, let user, let thread, let follows):
            let root = root(of: thread) ?? thread
            if follows { following.insert("\(user) \(root)") } else { following.remove("\(user) \(root)") }
        case .messageDeleted(_, let message):
            messages[Self.sequence(message) - 1].isDeleted = true
        default:
            break
        }
    }

    func unread(_ user: String) -> Int {
        messages.indices.count { index in
            let message = messages[index]
            return message.root == nil && index + 1 > mainReadUpTo[user] ?? 0 && message.sender != user
                && !message.isDeleted
        }
    }

    func unread(_ user: String, inThread root: String) -> Int {
        messages.indices.count { index in
            let message = messages[index]
            return message.root == root && index + 1 > threadReadUpTo["\(user) \(root)"] ?? 0
                && message.sender != user && !message.isDeleted
        }
    }

    func follows(_ user: String, _ root: String) -> Bool { following.contains("\(user) \(root)") }

    func unreadThreads(_ user: String) -> Int {
        Set(messages.compactMap(\.root)).count { follows(user, $0) && unread(user, inThread: $0) > 0 }
    }
}
