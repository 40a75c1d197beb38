import PropertyBased
import ReceiptsCore
import Testing

/// Mentions (issue 31): a message may name users or mention everyone; each recipient's unread
/// mention count is what is mentioned after their read watermark, and the named are told.
struct MentionTests {
    /// A group g of A, B, C and D.
    static func group() -> EngineHarness {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D"])
        return h
    }

    static func mention(
        _ h: inout EngineHarness,
        _ message: String,
        from sender: String,
        naming users: [String] = [],
        everyone: Bool = false,
        system: Bool = false,
        after: Int64 = 1000
    ) -> ApplyResult {
        h.accept(
            .messageSent(
                conversation: "g",
                message: message,
                sender: sender,
                isSystem: system,
                mentions: Mentions(users: users, everyone: everyone)
            ),
            after: after
        )
    }

    static func mentions(_ h: EngineHarness, _ user: String) -> Int {
        h.unread(user, "g").unreadMentions
    }

    @Test func aNamedMentionCountsForItsRecipientsUntilTheirReadReachesIt() {
        var h = Self.group()
        // Named twice, the sender itself, and a user who is no member: each recipient once.
        let sent = Self.mention(&h, "m1", from: "A", naming: ["C", "B", "B", "A", "Z"])
        #expect(sent.readStates.map(\.user) == ["B", "C"], "the named recipients are told, once each")
        for state in sent.readStates { #expect(state.state == h.unread(state.user, "g")) }
        #expect(["A", "B", "C", "D"].map { Self.mentions(h, $0) } == [0, 1, 1, 0])
        #expect(
            h.unread("B", "g")
                == UnreadCount(conversation: "g", unread: 1, isMarkedUnread: false, readUpTo: 0, unreadMentions: 1)
        )

        h.send("g", "m2", from: "D")
        #expect(Self.mentions(h, "B") == 1, "a later message without a mention changes nothing")
        let read = h.accept(.read(conversation: "g", user: "B", message: "m1"))
        #expect(read.readStates.first?.state.unreadMentions == 0)
        #expect(Self.mentions(h, "B") == 0 && Self.mentions(h, "C") == 1)
        h.accept(.markedUnread(conversation: "g", user: "B"))
        #expect(Self.mentions(h, "B") == 0, "marking unread brings no mention back")
        h.read("g", "C", nil)
        #expect(Self.mentions(h, "C") == 0)
    }

    @Test func everyoneCountsForEveryRecipientOnceAndPublishesNothingPerMember() {
        var h = Self.group()
        let sent = Self.mention(&h, "m1", from: "A", everyone: true)
        #expect(sent.readStates.isEmpty, "a 10,000-member group would publish 10,000 updates")
        #expect(["A", "B", "C", "D"].map { Self.mentions(h, $0) } == [0, 1, 1, 1])
        // Named and everyone: one mention, not two.
        _ = Self.mention(&h, "m2", from: "A", naming: ["B"], everyone: true)
        #expect(Self.mentions(h, "B") == 2 && Self.mentions(h, "C") == 2)
        h.read("g", "C", "m1")
        #expect(Self.mentions(h, "C") == 1)
    }

    @Test func systemMessagesMentionNobody() {
        var h = Self.group()
        let sent = Self.mention(&h, "m1", from: "A", naming: ["B"], everyone: true, system: true)
        #expect(sent.readStates.isEmpty)
        #expect(["B", "C"].map { Self.mentions(h, $0) } == [0, 0])
    }

    @Test func aPrivateReadClearsTheReadersOwnMentions() {
        var h = Self.group()
        h.accept(.receiptPrivacy(user: "B", shareReads: false))
        _ = Self.mention(&h, "m1", from: "A", naming: ["B"])
        h.read("g", "B", "m1")
        #expect(Self.mentions(h, "B") == 0, "the user's own view counts private reads")
        #expect(h.status("g", "m1").readCount == 0, "and nobody else sees the read")
    }

    @Test func deletingAMessageTakesItsMentionAwayAndTellsTheNamedWhoHadNotReadIt() {
        var h = Self.group()
        _ = Self.mention(&h, "m1", from: "A", naming: ["B", "C"], everyone: true)
        h.read("g", "C", "m1")
        let deleted = h.accept(.messageDeleted(conversation: "g", message: "m1"))
        #expect(deleted.readStates.map(\.user) == ["B"], "C had read it: their badge does not change")
        #expect(deleted.readStates.first?.state == h.unread("B", "g"))
        #expect(["B", "C", "D"].map { Self.mentions(h, $0) } == [0, 0, 0])
        #expect(h.accept(.messageDeleted(conversation: "g", message: "m1")).readStates.isEmpty, "deleted already")
    }

    @Test func membershipDecidesWhoAMentionCountsFor() {
        var h = Self.group()
        _ = Self.mention(&h, "m1", from: "A", naming: ["B", "E"])
        h.accept(.memberJoined(conversation: "g", user: "E"))
        #expect(Self.mentions(h, "E") == 0, "E was not a recipient of m1")
        _ = Self.mention(&h, "m2", from: "A", naming: ["E"])
        #expect(Self.mentions(h, "E") == 1)
        h.accept(.memberLeft(conversation: "g", user: "B"))
        #expect(h.unread("B", "g").hasLeft && Self.mentions(h, "B") == 1, "what they missed stays, as unread does")
        h.accept(.memberJoined(conversation: "g", user: "B"))
        _ = Self.mention(&h, "m3", from: "A", naming: ["B"])
        #expect(Self.mentions(h, "B") == 2)
        h.read("g", "B", nil)
        #expect(Self.mentions(h, "B") == 0)
        h.accept(.userDeleted(user: "E"))
        _ = Self.mention(&h, "m4", from: "A", naming: ["E"])
        #expect(Self.mentions(h, "E") == 1, "a deleted user is no recipient of m4")
    }

    @Test(arguments: [
        ([""], false),
        (["B", ""], false),
        ((0..<Mentions.userLimit + 1).map { "u\($0)" }, false),
        ((0..<Mentions.userLimit).map { "u\($0)" }, true),
    ])
    func mentionListsAreCheckedBeforeAnythingChanges(_ users: [String], _ accepted: Bool) {
        var h = Self.group()
        let result = h.apply(
            .messageSent(
                conversation: "g",
                message: "m1",
                sender: "A",
                isSystem: false,
                mentions: Mentions(users: users)
            )
        )
        if accepted {
            #expect(result.outcome == .accepted(held: false))
        } else {
            guard case .rejected(let rejection) = result.outcome else {
                Issue.record("accepted \(users.count) mentions")
                return
            }
            #expect(rejection.reason == .invalidEvent)
            #expect(h.engine.status(conversation: "g", message: "m1") == nil, "nothing was sent")
        }
    }

    @Test func retentionDropsTheMentionsOfExpiredMessages() throws {
        var h = Self.group()
        _ = Self.mention(&h, "m1", from: "A", naming: ["B"])
        _ = Self.mention(&h, "m2", from: "A", naming: ["B", "C"], after: 10_000)
        let expired = h.engine.expireMessages(sentBefore: Timestamp(milliseconds: h.now - 5_000))
        #expect(expired == 1)
        #expect(Self.mentions(h, "B") == 1 && Self.mentions(h, "C") == 1)
        let restored = try ReceiptEngine(restoringFrom: h.engine.encodedState(), configuration: .init())
        #expect(restored.encodedState() == h.engine.encodedState())
    }

    @Test func aSnapshotKeepsMentionsAndAConversationMovesWithThem() throws {
        var h = Self.group()
        _ = Self.mention(&h, "m1", from: "A", naming: ["B", "C"])
        _ = Self.mention(&h, "m2", from: "B", everyone: true)
        let restored = try ReceiptEngine(restoringFrom: h.engine.encodedState(), configuration: .init())
        for user in ["A", "B", "C", "D"] {
            #expect(
                restored.unreadCounts(user: user, conversations: ["g"])
                    == h.engine.unreadCounts(user: user, conversations: ["g"])
            )
        }
        #expect(["A", "B", "C", "D"].map { Self.mentions(h, $0) } == [1, 1, 2, 1])
    }

    @Test func aSnapshotOfVersion3StillRestoresWithoutMentions() throws {
        var h = Self.group()
        _ = Self.mention(&h, "m1", from: "A", naming: ["B"], everyone: true)
        let restored = try ReceiptEngine(restoringFrom: h.engine.encodedState(version: 3), configuration: .init())
        #expect(restored.unreadCounts(user: "B", conversations: ["g"]).first?.unreadMentions == 0)
        #expect(restored.unreadCounts(user: "B", conversations: ["g"]).first?.unread == 1)
        #expect(restored.status(conversation: "g", message: "m1") == h.status("g", "m1"))
    }

    // MARK: - Against a model

    /// Random sends with mentions, reads, deletions, marks and privacy in a group of four (and E,
    /// who is no member): after every event each user's unread mention count equals the count
    /// recomputed from the events: messages after their read watermark, from others, neither
    /// system nor deleted, naming them or everyone.
    @Test func unreadMentionsEqualAModelRecomputedFromTheEvents() async {
        await propertyCheck(count: 200, input: Gen.int(in: 0...Int(Int32.max)).array(of: 1...50)) { values in
            var h = Self.group()
            let users = ["A", "B", "C", "D", "E"]
            var model = MentionModel()
            for value in values {
                var x = value
                func take(_ n: Int) -> Int {
                    defer { x /= n }
                    return x % n
                }
                let user = users[take(users.count)]
                let kind: EventKind
                switch take(8) {
                case 0, 1, 2:
                    let named = users.indices.filter { _ in take(3) == 0 }.map { users[$0] }
                    kind = .messageSent(
                        conversation: "g",
                        message: "m\(model.messages.count + 1)",
                        sender: user,
                        isSystem: take(10) == 0,
                        mentions: Mentions(users: named, everyone: take(5) == 0)
                    )
                case 3, 4:
                    let message = model.messages.isEmpty || take(4) == 0 ? nil : "m\(take(model.messages.count) + 1)"
                    kind = .read(conversation: "g", user: user, message: message)
                case 5:
                    kind = .messageDeleted(conversation: "g", message: "m\(take(model.messages.count + 1) + 1)")
                case 6:
                    kind = .markedUnread(conversation: "g", user: user)
                default:
                    kind = .receiptPrivacy(user: user, shareReads: take(2) == 0)
                }
                let result = h.apply(kind)
                if case .accepted = result.outcome { model.apply(kind) }
                for user in users.prefix(4) {
                    #expect(Self.mentions(h, user) == model.mentions(of: user), "\(user) after \(kind)")
                }
            }
        }
    }
}

/// What the unread mention counts are, recomputed from accepted events in a group of A–D.
private struct MentionModel {
    struct Message {
        var sender: String
        var isSystem: Bool
        var named: Set<String>
        var everyone: Bool
        var isDeleted = false
    }

    var messages: [Message] = []
    var readUpTo: [String: Int] = [:]

    mutating func apply(_ kind: EventKind) {
        switch kind {
        case .messageSent(_, _, let sender, let isSystem, let mentions, _):
            messages.append(
                Message(sender: sender, isSystem: isSystem, named: Set(mentions.users), everyone: mentions.everyone)
            )
        case .read(_, let user, let message, _):
            let sequence = message.map { Int($0.dropFirst())! } ?? messages.count
            readUpTo[user] = max(readUpTo[user] ?? 0, sequence)
        case .messageDeleted(_, let message):
            messages[Int(message.dropFirst())! - 1].isDeleted = true
        default:
            break
        }
    }

    func mentions(of user: String) -> Int {
        messages.enumerated().filter { index, message in
            index + 1 > readUpTo[user] ?? 0 && message.sender != user && !message.isSystem && !message.isDeleted
                && (message.everyone || message.named.contains(user))
        }.count
    }
}
