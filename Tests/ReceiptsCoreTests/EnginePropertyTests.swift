import PropertyBased
import ReceiptsCore
import Testing

/// Random event sequences, with re-sent ids, reorderings and privacy changes.
struct EnginePropertyTests {
    static let script = Gen.int(in: 0...Int(Int32.max)).array(of: 1...60)
    static let configuration = EngineConfiguration(pendingReceiptLifetime: 5_000)

    /// Runs a script, calling `check` after every step with the result and the engine before it.
    static func run(
        _ values: [Int],
        engine: inout ReceiptEngine,
        now: inout Int64,
        check: (_ event: Event, _ result: ApplyResult, _ before: ReceiptEngine, _ after: ReceiptEngine, _ now: Int64) ->
            Void = {
                _,
                _,
                _,
                _,
                _ in
            }
    ) {
        var events: [Event] = []
        for (i, kind) in RandomScript.setup.enumerated() {
            _ = engine.apply(
                Event(id: EventID(source: "setup", sequence: UInt64(i + 1)), kind: kind),
                at: Timestamp(milliseconds: now)
            )
        }
        for (i, value) in values.enumerated() {
            let step = RandomScript.step(value, index: i)
            now += step.advance
            let event: Event
            if let earlier = step.resendOf, earlier < events.count {
                event = events[earlier]
            } else {
                event = Event(
                    id: EventID(source: "gw-\(i % 2)", sequence: UInt64(i + 1)),
                    clientTime: step.clientTimeOffset.map { Timestamp(milliseconds: now - $0) },
                    kind: step.kind
                )
            }
            events.append(event)
            let before = engine
            let result = engine.apply(event, at: Timestamp(milliseconds: now))
            check(event, result, before, engine, now)
        }
    }

    /// Statuses of every existing message.
    static func statuses(_ engine: ReceiptEngine) -> [MessageStatus?] {
        RandomScript.messageIDs.map { engine.status(conversation: $0.0, message: $0.1) }
    }

    static func details(_ engine: ReceiptEngine) -> [ReadDetail?] {
        RandomScript.messageIDs.map { engine.readDetail(conversation: $0.0, message: $0.1) }
    }

    @Test func statusNeverGoesDownAndTimestampsKeepTheFirstTime() async {
        await propertyCheck(count: 150, input: Self.script) { values in
            var engine = ReceiptEngine(configuration: Self.configuration)
            var now: Int64 = 1_000_000
            var published: [String: MessageStatus] = [:]
            Self.run(values, engine: &engine, now: &now) { _, result, before, engine, _ in
                for (old, new) in zip(Self.statuses(before), Self.statuses(engine)) {
                    guard let old else { continue }
                    guard let new else {
                        Issue.record("message \(old.message) disappeared")
                        continue
                    }
                    #expect(new.status >= old.status)
                    if old.deliveredAt != nil { #expect(new.deliveredAt == old.deliveredAt) }
                    if old.readAt != nil { #expect(new.readAt == old.readAt) }
                }
                for change in result.changes {
                    let key = change.conversation + "/" + change.message
                    if let earlier = published[key] { #expect(change.status >= earlier.status) }
                    published[key] = change
                    #expect(engine.status(conversation: change.conversation, message: change.message) == change)
                }
                // The sheet always agrees with the counts.
                for detail in Self.details(engine) {
                    guard let detail else { continue }
                    #expect(detail.read.count == detail.status.readCount)
                    #expect(detail.read.count + detail.delivered.count == detail.status.deliveredCount)
                    #expect(
                        detail.read.count + detail.delivered.count + detail.notDelivered.count
                            == detail.status.recipientCount
                    )
                }
            }
        }
    }

    @Test func applyingAnyEventTwiceIsANoOp() async {
        await propertyCheck(count: 150, input: Self.script) { values in
            var engine = ReceiptEngine(configuration: Self.configuration)
            var now: Int64 = 1_000_000
            Self.run(values, engine: &engine, now: &now) { event, result, _, engine, now in
                let state = engine.encodedState()
                var twice = engine
                let again = twice.apply(event, at: Timestamp(milliseconds: now))
                #expect(again.changes.isEmpty)
                switch result.outcome {
                case .accepted, .duplicate:
                    #expect(again.outcome == .duplicate)
                case .rejected(let rejection):
                    #expect(again.outcome == .rejected(rejection))
                }
                #expect(twice.encodedState() == state)
            }
        }
    }

    @Test func receiptsByDifferentUsersCommute() async {
        let input = zip(Self.script, Gen.int(in: 0...Int(Int32.max)).array(of: 5), Gen.int(in: 0...119))
        await propertyCheck(count: 100, input: input) { values, picks, permutation in
            var base = ReceiptEngine(configuration: Self.configuration)
            var now: Int64 = 1_000_000
            Self.run(values, engine: &base, now: &now)
            // One receipt per user, on messages that exist.
            let existing = RandomScript.messageIDs.filter { base.status(conversation: $0.0, message: $0.1) != nil }
            guard !existing.isEmpty else { return }
            let receipts: [EventKind] = zip(RandomScript.users, picks).map { user, pick in
                let (conversation, message) = existing[pick % existing.count]
                switch pick / existing.count % 3 {
                case 0: return .delivered(conversation: conversation, user: user, message: message)
                case 1: return .read(conversation: conversation, user: user, message: message)
                default: return .read(conversation: conversation, user: user, message: nil)
                }
            }
            var order = Array(receipts.indices)
            var rest = permutation
            var shuffled: [Int] = []
            while !order.isEmpty {
                shuffled.append(order.remove(at: rest % order.count))
                rest /= max(order.count, 1)
            }
            func apply(_ indices: [Int]) -> ReceiptEngine {
                var engine = base
                for i in indices {
                    _ = engine.apply(
                        Event(id: EventID(source: "commute", sequence: UInt64(i + 1)), kind: receipts[i]),
                        at: Timestamp(milliseconds: now + 1)
                    )
                }
                return engine
            }
            let inOrder = apply(Array(receipts.indices))
            let reordered = apply(shuffled)
            #expect(Self.statuses(inOrder) == Self.statuses(reordered))
            #expect(Self.details(inOrder) == Self.details(reordered))
            for user in RandomScript.users {
                #expect(
                    inOrder.unreadCounts(user: user, conversations: [])
                        == reordered.unreadCounts(user: user, conversations: [])
                )
            }
        }
    }

    @Test func noChangeOrQueryRevealsAPrivateRead() async {
        await propertyCheck(count: 150, input: Self.script) { values in
            // E never shares reads; in the reference world E's reads are plain deliveries.
            var hidden = ReceiptEngine(configuration: Self.configuration)
            var reference = ReceiptEngine(configuration: Self.configuration)
            _ = hidden.apply(
                Event(id: EventID(source: "privacy", sequence: 1), kind: .receiptPrivacy(user: "E", shareReads: false)),
                at: Timestamp(milliseconds: 0)
            )
            var now: Int64 = 1_000_000
            var referenceEvents: [Event] = []
            var nowByIndex: [Int64] = []
            var hiddenChanges: [[MessageStatus]] = []
            Self.run(values.map { Self.withoutPrivacyChangesOfE($0) }, engine: &hidden, now: &now) {
                event,
                result,
                _,
                _,
                now in
                hiddenChanges.append(result.changes)
                nowByIndex.append(now)
                referenceEvents.append(event)
            }
            var referenceNow: Int64 = 1_000_000
            for (i, kind) in RandomScript.setup.enumerated() {
                _ = reference.apply(
                    Event(id: EventID(source: "setup", sequence: UInt64(i + 1)), kind: kind),
                    at: Timestamp(milliseconds: referenceNow)
                )
            }
            var converted: [EventID: Event] = [:]
            for (i, event) in referenceEvents.enumerated() {
                referenceNow = nowByIndex[i]
                // A re-sent id stands for what it stood for when it was accepted; a rejected
                // one is converted afresh, as the engine evaluates it afresh.
                let event = converted[event.id] ?? Self.asDelivery(event, in: reference, at: referenceNow)
                let result = reference.apply(event, at: Timestamp(milliseconds: referenceNow))
                if case .accepted = result.outcome { converted[event.id] = event }
                #expect(result.changes == hiddenChanges[i])
            }
            #expect(Self.statuses(hidden) == Self.statuses(reference))
            #expect(Self.details(hidden) == Self.details(reference))
            for conversation in RandomScript.conversations {
                #expect(
                    hidden.snapshot(conversation: conversation, limit: 0)
                        == reference.snapshot(conversation: conversation, limit: 0)
                )
            }
            for user in RandomScript.users {
                for conversation in RandomScript.conversations {
                    #expect(
                        hidden.lastSent(conversation: conversation, sender: user)
                            == reference.lastSent(conversation: conversation, sender: user)
                    )
                }
            }
        }
    }

    /// E's read as the delivery that must look the same to everyone else.
    static func asDelivery(_ event: Event, in reference: ReceiptEngine, at now: Int64) -> Event {
        guard case .read(let conversation, "E", let message, let thread) = event.kind else { return event }
        var event = event
        if let thread {
            // A read in a thread is the same delivery in the thread (the whole of it without a
            // message), accepted or rejected alike.
            event.kind = .delivered(conversation: conversation, user: "E", message: message ?? "", thread: thread)
            return event
        }
        // "Read everything" is a delivery of the latest main-timeline message from someone else
        // (E's own messages never count for E, thread replies are read in their threads), with a
        // client time clamped from the latest message on.
        let messages = reference.snapshot(conversation: conversation, limit: 0)?.messages ?? []
        if let target = message ?? messages.last(where: { $0.sender != "E" && $0.threadRoot == nil })?.message {
            event.kind = .delivered(conversation: conversation, user: "E", message: target)
            if message == nil, let clientTime = event.clientTime, let latest = messages.last?.sentAt {
                event.clientTime = max(clientTime, latest)
            }
            var probe = reference
            if message != nil || probe.apply(event, at: Timestamp(milliseconds: now)).outcome == .accepted(held: false)
            {
                return event
            }
        }
        // Nothing E can deliver: a stand-in accepted exactly when E's "read everything" is (E is
        // a current member), so a later re-send of this id is a duplicate in both worlds.
        event.kind = .markedUnread(conversation: conversation, user: "E")
        return event
    }

    /// Replaces steps that would change E's sharing by a re-send of an earlier event.
    static func withoutPrivacyChangesOfE(_ value: Int) -> Int {
        if case .receiptPrivacy("E", _) = RandomScript.step(value, index: 0).kind { return value - value % 16 + 13 }
        return value
    }

    @Test func snapshotRoundTripThenSameFutureResults() async throws {
        await propertyCheck(count: 100, input: zip(Self.script, Self.script)) { first, second in
            var engine = ReceiptEngine(configuration: Self.configuration)
            var now: Int64 = 1_000_000
            Self.run(first, engine: &engine, now: &now)
            if first.count % 3 == 0 { _ = engine.expireMessages(sentBefore: Timestamp(milliseconds: now - 20_000)) }
            let bytes = engine.encodedState()
            guard var restored = try? ReceiptEngine(restoringFrom: bytes, configuration: Self.configuration) else {
                Issue.record("a snapshot failed to decode")
                return
            }
            #expect(restored.encodedState() == bytes)
            #expect(Self.details(restored) == Self.details(engine))
            for (i, value) in second.enumerated() {
                let step = RandomScript.step(value, index: 0)
                now += step.advance
                let event = Event(id: EventID(source: "later", sequence: UInt64(i % 40 + 1)), kind: step.kind)
                #expect(
                    engine.apply(event, at: Timestamp(milliseconds: now))
                        == restored.apply(event, at: Timestamp(milliseconds: now))
                )
            }
            #expect(engine.encodedState() == restored.encodedState())
        }
    }
}
