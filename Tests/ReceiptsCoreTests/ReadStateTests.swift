import ReceiptsCore
import Testing

/// A user's own read state (issue 23): every change of it is reported once, for that user, in
/// `ApplyResult.readStates`; new messages and deliveries report none; a private read reaches
/// its reader's own state and nothing anyone else sees.
struct ReadStateTests {
    /// A group g of A, B and C with m1, m2 and m3 from A.
    static func threeMessages() -> EngineHarness {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C"])
        for i in 1...3 { h.send("g", "m\(i)", from: "A") }
        return h
    }

    /// Expects that an event reported exactly one read state, `user`'s, equal to what the
    /// user's unread counts now answer, at the event's server time; returns it.
    @discardableResult
    static func expectOne(
        _ result: ApplyResult,
        for user: String,
        in h: EngineHarness,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> UnreadCount? {
        #expect(result.readStates.count == 1, "\(result.readStates)", sourceLocation: sourceLocation)
        guard let change = result.readStates.first else { return nil }
        #expect(change.user == user, sourceLocation: sourceLocation)
        #expect(change.time == Timestamp(milliseconds: h.now), sourceLocation: sourceLocation)
        #expect(change.state == h.unread(user, change.state.conversation), sourceLocation: sourceLocation)
        return change.state
    }

    // MARK: - Every kind of change, once

    @Test func aReadThatMovesTheWatermarkReportsTheReadersStateOnce() {
        var h = Self.threeMessages()
        let read = h.accept(.read(conversation: "g", user: "B", message: "m2"))
        #expect(
            Self.expectOne(read, for: "B", in: h)
                == UnreadCount(conversation: "g", unread: 1, isMarkedUnread: false, readUpTo: 2)
        )
        #expect(h.accept(.read(conversation: "g", user: "B", message: "m1")).readStates.isEmpty, "an older message")
        #expect(h.accept(.read(conversation: "g", user: "B", message: "m2")).readStates.isEmpty, "the same message")
        let all = h.accept(.read(conversation: "g", user: "B", message: nil))
        #expect(
            Self.expectOne(all, for: "B", in: h)
                == UnreadCount(conversation: "g", unread: 0, isMarkedUnread: false, readUpTo: 3)
        )
        #expect(h.accept(.read(conversation: "g", user: "B", message: nil)).readStates.isEmpty, "nothing new")
    }

    @Test func markedUnreadReportsOnceAndTheNextReadClearsIt() {
        var h = Self.threeMessages()
        h.read("g", "B", "m3")
        let marked = h.accept(.markedUnread(conversation: "g", user: "B"))
        #expect(
            Self.expectOne(marked, for: "B", in: h)
                == UnreadCount(conversation: "g", unread: 0, isMarkedUnread: true, readUpTo: 3)
        )
        #expect(h.accept(.markedUnread(conversation: "g", user: "B")).readStates.isEmpty, "already marked")
        #expect(h.accept(.delivered(conversation: "g", user: "B", message: "m3")).readStates.isEmpty)
        // A read of an older message moves no watermark but clears the mark.
        let cleared = h.accept(.read(conversation: "g", user: "B", message: "m1"))
        #expect(
            Self.expectOne(cleared, for: "B", in: h)
                == UnreadCount(conversation: "g", unread: 0, isMarkedUnread: false, readUpTo: 3)
        )
        // Marked again, a read that also moves the watermark is still one change.
        h.send("g", "m4", from: "C")
        h.accept(.markedUnread(conversation: "g", user: "B"))
        let both = h.accept(.read(conversation: "g", user: "B", message: "m4"))
        #expect(
            Self.expectOne(both, for: "B", in: h)
                == UnreadCount(conversation: "g", unread: 0, isMarkedUnread: false, readUpTo: 4)
        )
    }

    @Test func aReadOfAConversationWithoutMessagesClearsTheMark() {
        var h = EngineHarness()
        h.group("e", ["A", "B"])
        Self.expectOne(h.accept(.markedUnread(conversation: "e", user: "B")), for: "B", in: h)
        let cleared = h.accept(.read(conversation: "e", user: "B", message: nil))
        #expect(Self.expectOne(cleared, for: "B", in: h)?.isMarkedUnread == false)
        #expect(h.accept(.read(conversation: "e", user: "B", message: nil)).readStates.isEmpty)
    }

    @Test func leavingReportsTheLeaversStateOnce() {
        var h = Self.threeMessages()
        h.read("g", "B", "m1")
        let left = h.accept(.memberLeft(conversation: "g", user: "B"))
        let state = Self.expectOne(left, for: "B", in: h)
        #expect(state?.hasLeft == true)
        #expect(state?.readUpTo == 1)
        #expect(h.accept(.memberLeft(conversation: "g", user: "B")).readStates.isEmpty, "no longer a member")
        #expect(h.accept(.memberLeft(conversation: "g", user: "Z")).readStates.isEmpty, "never a member")
    }

    @Test func anUpsertReportsTheMembersItRemovesAndAdds() {
        var h = Self.threeMessages()
        let upserted = h.accept(.conversationUpserted(conversation: "g", kind: .group, members: ["A", "B", "D"]))
        #expect(upserted.readStates.map(\.user) == ["C", "D"])
        #expect(upserted.readStates.first { $0.user == "C" }?.state.hasLeft == true)
        #expect(
            upserted.readStates.first { $0.user == "D" }?.state
                == UnreadCount(conversation: "g", unread: 0, isMarkedUnread: false, readUpTo: 0)
        )
        // The same member set again changes nobody's state.
        let again = h.accept(.conversationUpserted(conversation: "g", kind: .group, members: ["A", "B", "D"]))
        #expect(again.readStates.isEmpty)
    }

    @Test func joiningAndRejoiningReportTheMembersStateOnce() {
        var h = Self.threeMessages()
        #expect(
            Self.expectOne(h.accept(.memberJoined(conversation: "g", user: "E")), for: "E", in: h)?.hasLeft == false
        )
        #expect(h.accept(.memberJoined(conversation: "g", user: "E")).readStates.isEmpty, "already a member")
        #expect(Self.expectOne(h.accept(.memberLeft(conversation: "g", user: "B")), for: "B", in: h)?.hasLeft == true)
        h.send("g", "m4", from: "A")
        let rejoined = Self.expectOne(h.accept(.memberJoined(conversation: "g", user: "B")), for: "B", in: h)
        #expect(rejoined?.hasLeft == false, "a device that dropped the conversation shows it again")
    }

    @Test func aDeletedUserGetsOneStatePerConversationTheyWereIn() {
        var h = Self.threeMessages()
        h.group("h", ["A", "B"])
        h.direct("ab", "A", "B")
        h.group("k", ["B", "C"])
        h.accept(.memberLeft(conversation: "k", user: "B"))
        h.group("other", ["A", "C"])
        h.accept(.markedUnread(conversation: "h", user: "B"))
        let deleted = h.accept(.userDeleted(user: "B"))
        #expect(deleted.readStates.map(\.user) == ["B", "B", "B"])
        #expect(Set(deleted.readStates.map(\.state.conversation)) == ["g", "h", "ab"])
        #expect(deleted.readStates.allSatisfy { $0.state.hasLeft && $0.time == Timestamp(milliseconds: h.now) })
        #expect(deleted.readStates.first { $0.state.conversation == "g" }?.state.unread == 3)
        #expect(deleted.readStates.first { $0.state.conversation == "h" }?.state.isMarkedUnread == true)
        #expect(h.accept(.userDeleted(user: "B")).readStates.isEmpty, "deleted once")
    }

    @Test func aHeldReadReportsWhenItsMessageArrives() {
        var h = Self.threeMessages()
        let held = h.apply(.read(conversation: "g", user: "B", message: "m5"))
        #expect(held.outcome == .accepted(held: true))
        #expect(held.readStates.isEmpty)
        #expect(h.apply(.delivered(conversation: "g", user: "C", message: "m5")).readStates.isEmpty)
        h.send("g", "m4", from: "A")
        let arrived = h.accept(.messageSent(conversation: "g", message: "m5", sender: "A", isSystem: false))
        #expect(
            Self.expectOne(arrived, for: "B", in: h)
                == UnreadCount(conversation: "g", unread: 0, isMarkedUnread: false, readUpTo: 5)
        )
    }

    @Test func newMessagesDeliveriesAndSettingsReportNone() {
        var h = EngineHarness()
        let members = (0..<50).map { "u\($0)" }
        h.group("g", members)
        h.direct("ab", "u1", "u2")
        var kinds: [EventKind] = []
        for i in 0..<20 {
            kinds.append(.messageSent(conversation: "g", message: "m\(i)", sender: members[i % 2], isSystem: i == 7))
            kinds.append(.messageSent(conversation: "ab", message: "d\(i)", sender: "u1", isSystem: false))
        }
        kinds += members.dropFirst(2).map { .delivered(conversation: "g", user: $0, message: "m19") }
        kinds += [
            .delivered(conversation: "ab", user: "u2", message: "d19"),
            .messageEdited(conversation: "g", message: "m3"),
            .messageDeleted(conversation: "g", message: "m4"),
            .receiptPrivacy(user: "u3", shareReads: false),
            .conversationReceiptPrivacy(conversation: "g", user: "u4", shareReads: false),
        ]
        for kind in kinds {
            let result = h.accept(kind)
            #expect(result.readStates.isEmpty, "\(kind)")
        }
    }

    // MARK: - Private reads

    /// Everything a read lets anyone but its reader see, for one message of g.
    struct Observed {
        var changes: [MessageStatus]
        var status: MessageStatus
        var detail: ReadDetail
        var snapshot: ConversationSnapshot?
    }

    /// A read of m2 by B in a group g of A, B and C, after B set sharing as given; returns what
    /// it reported and what others can observe.
    static func readOfM2(global: Bool, here: Bool) -> (ApplyResult, Observed, EngineHarness) {
        var h = Self.threeMessages()
        h.accept(.receiptPrivacy(user: "B", shareReads: global))
        h.accept(.conversationReceiptPrivacy(conversation: "g", user: "B", shareReads: here))
        let result = h.accept(.read(conversation: "g", user: "B", message: "m2"))
        let observed = Observed(
            changes: result.changes,
            status: h.status("g", "m2"),
            detail: h.detail("g", "m2"),
            snapshot: h.engine.snapshot(conversation: "g", limit: 0)
        )
        return (result, observed, h)
    }

    @Test(arguments: zip([false, true], [true, false]))
    func aPrivateReadReachesItsReaderOnly(global: Bool, here: Bool) {
        let (result, observed, h) = Self.readOfM2(global: global, here: here)
        #expect(
            Self.expectOne(result, for: "B", in: h)
                == UnreadCount(conversation: "g", unread: 1, isMarkedUnread: false, readUpTo: 2)
        )
        #expect(result.readStates.allSatisfy { $0.user == "B" })
        #expect(observed.changes.map(\.message) == ["m1", "m2"])
        #expect(observed.changes.allSatisfy { $0.readCount == 0 && $0.readAt == nil && $0.deliveredCount == 1 })
        #expect(observed.status.readCount == 0)
        #expect(observed.detail.read.isEmpty)
        #expect(observed.detail.delivered.map(\.user) == ["B"])
        #expect(observed.detail.delivered.first?.readAt == nil)
        // Exactly what a delivery would have shown.
        var delivering = Self.threeMessages()
        // Two settings that change nothing keep its clock in step with the reading one's.
        delivering.accept(.receiptPrivacy(user: "B", shareReads: true))
        delivering.accept(.receiptPrivacy(user: "B", shareReads: true))
        let delivered = delivering.accept(.delivered(conversation: "g", user: "B", message: "m2"))
        #expect(observed.changes == delivered.changes)
        #expect(observed.detail == delivering.detail("g", "m2"))
        #expect(observed.snapshot == delivering.engine.snapshot(conversation: "g", limit: 0))
        // Another user's own state knows nothing of it either.
        #expect(h.unread("C", "g") == delivering.unread("C", "g"))
    }

    @Test(arguments: [false, true], [false, true])
    func theStricterOfTheGlobalAndTheConversationsSettingWins(global: Bool, here: Bool) {
        let shared = global && here
        let (result, observed, h) = Self.readOfM2(global: global, here: here)
        // The reader's own state moves whatever the settings.
        #expect(Self.expectOne(result, for: "B", in: h)?.readUpTo == 2)
        #expect(observed.status.readCount == (shared ? 1 : 0), "global \(global), here \(here)")
        #expect(observed.status.status == (shared ? .readBySome : .notDelivered))
        #expect(observed.changes.contains { $0.readCount > 0 } == shared)
        #expect(observed.detail.read.map(\.user) == (shared ? ["B"] : []))
        #expect(observed.detail.delivered.map(\.user) == (shared ? [] : ["B"]))
    }

    @Test func aHeldPrivateReadReportsToItsReaderOnly() {
        var h = Self.threeMessages()
        h.accept(.conversationReceiptPrivacy(conversation: "g", user: "B", shareReads: false))
        #expect(h.apply(.read(conversation: "g", user: "B", message: "m4")).outcome == .accepted(held: true))
        let arrived = h.accept(.messageSent(conversation: "g", message: "m4", sender: "C", isSystem: false))
        #expect(Self.expectOne(arrived, for: "B", in: h)?.readUpTo == 4)
        #expect(arrived.changes.allSatisfy { $0.readCount == 0 })
        #expect(h.detail("g", "m4").read.isEmpty)
    }

    // MARK: - Reporting off

    @Test func reportingOffReportsNoReadStatesAndKeepsTheSameState() {
        var on = EngineHarness()
        var off = EngineHarness()
        off.engine.reportsReadStates = false
        let kinds: [EventKind] = [
            .conversationUpserted(conversation: "g", kind: .group, members: ["A", "B", "C"]),
            .conversationReceiptPrivacy(conversation: "g", user: "C", shareReads: false),
            .messageSent(conversation: "g", message: "m1", sender: "A", isSystem: false),
            .read(conversation: "g", user: "B", message: "m9"),
            .messageSent(conversation: "g", message: "m2", sender: "A", isSystem: false),
            .read(conversation: "g", user: "B", message: "m1"),
            .read(conversation: "g", user: "C", message: "m2"),
            .markedUnread(conversation: "g", user: "B"),
            .messageSent(conversation: "g", message: "m9", sender: "A", isSystem: false),
            .memberLeft(conversation: "g", user: "C"),
            .conversationUpserted(conversation: "g", kind: .group, members: ["A", "D"]),
            .userDeleted(user: "A"),
        ]
        var reported = 0
        for kind in kinds {
            let a = on.apply(kind)
            let b = off.apply(kind)
            reported += a.readStates.count
            #expect(b.readStates.isEmpty, "\(kind)")
            #expect(a.outcome == b.outcome, "\(kind)")
            #expect(a.changes == b.changes, "\(kind)")
        }
        #expect(reported >= 7)
        #expect(on.engine.encodedState() == off.engine.encodedState())
        for user in ["A", "B", "C", "D"] {
            #expect(
                on.engine.unreadCounts(user: user, conversations: [])
                    == off.engine.unreadCounts(user: user, conversations: [])
            )
        }
    }

    // MARK: - Paging

    /// The whole sheet as the one list pages cut.
    static func lines(_ detail: ReadDetail) -> [RecipientReceipt] {
        detail.read + detail.delivered + detail.notDelivered
    }

    /// A line's place in the sheet's order.
    static func place(_ line: RecipientReceipt) -> ReadDetailCursor {
        ReadDetailCursor(state: line.state, readAt: line.readAt?.milliseconds ?? 0, user: line.user)
    }

    /// Every page of a message's sheet, asked for one after the other (at most 1,000 pages),
    /// with `between` run before each page after the first.
    static func pages(
        _ h: inout EngineHarness,
        _ conversation: String,
        _ message: String,
        size: Int,
        between: (inout EngineHarness, Int) -> Void = { _, _ in }
    ) throws -> [ReadDetail] {
        var pages: [ReadDetail] = []
        var after: String?
        repeat {
            if !pages.isEmpty { between(&h, pages.count) }
            guard
                let page = try h.engine.readDetail(
                    conversation: conversation,
                    message: message,
                    page: ReadDetailPage(size: size, after: after)
                )
            else { break }
            pages.append(page)
            after = page.nextCursor
        } while after != nil && pages.count < 1_000
        return pages
    }

    @Test(arguments: [1, 2, 3, 5, 100])
    func pagesOfASmallSheetMakeUpTheWholeSheet(size: Int) throws {
        var h = EngineHarness()
        h.group("g", ["A", "B", "C", "D", "E", "F"])
        h.send("g", "m1", from: "A")
        h.deliver("g", "F", "m1")
        h.read("g", "D", "m1")
        h.read("g", "B", "m1")
        h.accept(.read(conversation: "g", user: "E", message: "m1"), after: 0)
        let whole = h.detail("g", "m1")
        let pages = try Self.pages(&h, "g", "m1", size: size)
        #expect(pages.flatMap(Self.lines) == Self.lines(whole))
        #expect(pages.dropLast().allSatisfy { Self.lines($0).count == size })
        #expect(pages.last?.nextCursor == nil)
        #expect(pages.allSatisfy { $0.status == whole.status })
        // Readers most recent first (B and E at one time: by user id), then delivered, then not.
        #expect(Self.lines(whole).map(\.user) == ["B", "E", "D", "F", "C"])
        // A cursor past the last line answers an empty last page.
        let past = ReadDetailCursor(state: .notDelivered, readAt: 0, user: "zzz").token(
            conversation: "g",
            message: "m1"
        )
        let empty = try h.engine.readDetail(
            conversation: "g",
            message: "m1",
            page: ReadDetailPage(size: size, after: past)
        )
        #expect(empty.map(Self.lines) == [])
        #expect(empty?.nextCursor == nil)
    }

    @Test func pagingWhileReadsArriveShowsEveryLineThatStoodStillOnce() throws {
        var h = EngineHarness()
        let members = (0..<400).map { Self.member($0) }
        h.group("g", members)
        h.send("g", "m1", from: members[0])
        for i in 1...150 { h.read("g", members[i], "m1") }
        for i in 151...300 { h.deliver("g", members[i], "m1") }
        let before = Dictionary(uniqueKeysWithValues: Self.lines(h.detail("g", "m1")).map { ($0.user, Self.place($0)) })
        // Between pages: a delivered member reads, one more gets it delivered, and one reads
        // with an old client time, so that their line lands among the readers already paged.
        var nextReader = 151
        var nextDelivery = 301
        let pages = try Self.pages(&h, "g", "m1", size: 37) { h, page in
            h.read("g", members[nextReader], "m1")
            h.read("g", members[nextReader + 1], "m1", clientTime: h.now - 100_000 + Int64(page) * 1000)
            nextReader += 2
            if nextDelivery < 400 {
                h.deliver("g", members[nextDelivery], "m1")
                nextDelivery += 1
            }
        }
        let after = Dictionary(uniqueKeysWithValues: Self.lines(h.detail("g", "m1")).map { ($0.user, Self.place($0)) })
        let shown = pages.flatMap(Self.lines)
        #expect(pages.count > 5)
        #expect(pages.last?.nextCursor == nil)
        for page in pages {
            let places = Self.lines(page).map(Self.place)
            #expect(places == places.sorted(), "a page is in the sheet's order")
        }
        var seen: [String: [ReadDetailCursor]] = [:]
        for line in shown { seen[line.user, default: []].append(Self.place(line)) }
        let stood = members.dropFirst().filter { before[$0] == after[$0] }
        #expect(stood.count > 200)
        for user in stood {
            #expect(seen[user]?.count == 1, "\(user) stood still and was shown \(seen[user]?.count ?? 0) times")
        }
        for (user, places) in seen where places.count > 1 {
            #expect(Set(places).count == places.count, "\(user) shown twice at the same place")
        }
    }

    // MARK: - Ten thousand members

    /// Member `i` of a big group: "u" and five digits, so that id order is number order.
    static func member(_ i: Int) -> String {
        let digits = String(i)
        return "u" + String(repeating: "0", count: 5 - digits.count) + digits
    }

    /// The expected sheet of a message, from what each member did.
    struct BigGroupModel {
        /// Per member (index 0 the sender): delivered up to, read up to, read in private, read time.
        var delivered: [Int]
        var read: [Int]
        var isPrivate: [Bool]
        var readAt: [Int64]

        func reads(_ i: Int, _ k: Int) -> Bool { read[i] >= k && !isPrivate[i] }
        func has(_ i: Int, _ k: Int) -> Bool { max(delivered[i], read[i]) >= k }

        /// The sheet's lines of message `k`, in the sheet's order, as (user, state, read time).
        func lines(_ k: Int) -> [(user: String, state: RecipientState, readAt: Int64?)] {
            let recipients = 1..<delivered.count
            let readers = recipients.filter { reads($0, k) }.sorted { (readAt[$1], $0) < (readAt[$0], $1) }
            var lines: [(user: String, state: RecipientState, readAt: Int64?)] = []
            for i in readers { lines.append((ReadStateTests.member(i), .read, readAt[i])) }
            for i in recipients where !reads(i, k) && has(i, k) {
                lines.append((ReadStateTests.member(i), .delivered, nil))
            }
            for i in recipients where !has(i, k) { lines.append((ReadStateTests.member(i), .notDelivered, nil)) }
            return lines
        }
    }

    @Test func aGroupOfTenThousandMembersStaysExact() throws {
        let count = 10_000
        let messages = 10
        var h = EngineHarness()
        let members = (0..<count).map { Self.member($0) }
        h.group("big", members)
        for k in 1...messages { h.send("big", "m\(k)", from: members[0]) }
        var model = BigGroupModel(
            delivered: (0..<count).map { $0 == 0 ? 0 : 8 + $0 % 3 },
            read: (0..<count).map { $0 % 11 },
            isPrivate: (0..<count).map { $0 % 1000 == 500 },
            readAt: Array(repeating: 0, count: count)
        )
        for i in 1..<count {
            let result = h.accept(.delivered(conversation: "big", user: members[i], message: "m\(model.delivered[i])"))
            #expect(result.readStates.isEmpty)
        }
        for i in 1..<count where model.isPrivate[i] {
            h.accept(.conversationReceiptPrivacy(conversation: "big", user: members[i], shareReads: false))
        }
        // Reads in runs of 7 at one time, so that ties (by user id) cross page boundaries.
        for i in 1..<count where model.read[i] > 0 {
            let result = h.accept(
                .read(conversation: "big", user: members[i], message: "m\(model.read[i])"),
                after: i % 7 == 0 ? 1000 : 0
            )
            model.readAt[i] = h.now
            #expect(result.readStates.map(\.user) == [members[i]])
            #expect(result.readStates.first?.state.readUpTo == UInt64(model.read[i]))
            #expect(result.readStates.first?.state.unread == messages - model.read[i])
        }

        let recipients = count - 1
        for k in 1...messages {
            let expected = model.lines(k)
            let readCount = expected.filter { $0.state == .read }.count
            let deliveredCount = expected.filter { $0.state != .notDelivered }.count
            let status = h.status("big", "m\(k)")
            #expect(status.recipientCount == recipients)
            #expect(status.readCount == readCount, "m\(k)")
            #expect(status.deliveredCount == deliveredCount, "m\(k)")
            #expect(status.status == .readBySome, "m\(k)")
            #expect((status.deliveredAt != nil) == (deliveredCount == recipients), "m\(k)")
            #expect(h.text("big", "m\(k)", prefersCounts: true) == "Read by \(readCount) of \(recipients)")
            let whole = h.detail("big", "m\(k)")
            let lines = Self.lines(whole)
            #expect(lines.count == recipients)
            #expect(lines.map(\.user) == expected.map(\.user), "m\(k): the sheet's order")
            #expect(lines.map(\.state) == expected.map(\.state), "m\(k)")
            #expect(lines.map { $0.readAt?.milliseconds } == expected.map(\.readAt), "m\(k)")
        }
        // m1: nearly all read; m9: all three lists are long. Paged through, 333 lines a page.
        for k in [1, 9] {
            let whole = Self.lines(h.detail("big", "m\(k)"))
            let pages = try Self.pages(&h, "big", "m\(k)", size: 333)
            let shown = pages.flatMap(Self.lines)
            #expect(pages.count == (recipients + 332) / 333)
            #expect(pages.dropLast().allSatisfy { Self.lines($0).count == 333 && $0.nextCursor != nil })
            #expect(pages.last?.nextCursor == nil)
            #expect(shown == whole, "m\(k): the pages make up the whole sheet")
            #expect(Set(shown.map(\.user)).count == recipients, "m\(k): nobody twice")
            let readTimes = shown.prefix { $0.state == .read }.map { $0.readAt!.milliseconds }
            #expect(readTimes == readTimes.sorted(by: >), "m\(k): most recent read first")
        }
        // Their own counts, private reads included.
        for i in [0, 1, 11, 500, 1500, 9998, 9999] {
            let own = h.unread(members[i], "big")
            let read = i == 0 ? 0 : model.read[i]
            let expected = UnreadCount(
                conversation: "big",
                unread: i == 0 ? 0 : messages - read,
                isMarkedUnread: false,
                readUpTo: UInt64(read)
            )
            #expect(own == expected, "\(members[i])")
        }
    }
}
