import ReceiptsCore

/// The engine, on scripts derived from the input (`EngineScript`), checked after every step:
///
/// - a message's status never goes down, and its delivered and read times never change once set;
/// - every status change is published, and what is published is the message's status;
/// - the private reader's reads never show: not in the "Read by" sheet, not in a read count;
/// - applying an event twice changes nothing the second time;
/// - halfway, a snapshot round trip gives an engine that answers every later event and query
///   exactly as the live one does.
enum EngineTarget {
    /// Small bounds keep snapshots (and so every execution) short.
    static let configuration = EngineConfiguration(
        pendingReceiptLimit: 64,
        pendingReceiptLifetime: 30_000,
        duplicateWindow: 64
    )

    /// Runs the script of `input`, checking after every step.
    ///
    /// - Returns: The engine after the script.
    @discardableResult
    static func run(_ input: [UInt8]) throws(InvariantViolation) -> ReceiptEngine {
        var engine = ReceiptEngine(configuration: configuration)
        var now = EngineScript.start
        for (i, kind) in EngineScript.setup.enumerated() {
            _ = engine.apply(
                Event(id: EventID(source: "setup", sequence: UInt64(i + 1)), kind: kind),
                at: Timestamp(milliseconds: now)
            )
        }
        let steps = EngineScript.steps(input)
        var restored: ReceiptEngine?
        var events: [Event] = []
        var seen = statuses(engine)
        for (i, step) in steps.enumerated() {
            if i == steps.count / 2 { restored = try roundTrip(engine) }
            let event: Event
            switch step {
            case .expire(let age):
                let cutoff = Timestamp(milliseconds: now - age)
                let removed = engine.expireMessages(sentBefore: cutoff)
                try require(
                    restored?.expireMessages(sentBefore: cutoff) ?? removed == removed,
                    "expiry removed different messages after a snapshot round trip"
                )
                seen = statuses(engine)
                continue
            case .resend(let stepsBack):
                guard events.count >= stepsBack else { continue }
                event = events[events.count - stepsBack]
            case .event(let kind, let clientTimeOffset, let advance):
                now += advance
                event = Event(
                    id: EventID(source: "gw", sequence: UInt64(i + 1)),
                    clientTime: clientTimeOffset.map { Timestamp(milliseconds: now - $0) },
                    kind: kind
                )
            }
            events.append(event)
            let at = Timestamp(milliseconds: now)
            let result = engine.apply(event, at: at)
            var twice = engine
            let again = twice.apply(event, at: at)
            try requireNoOp(again, after: result, of: event)
            if var live = restored {
                restored = nil
                let other = live.apply(event, at: at)
                try require(other == result, "after a snapshot round trip, \(event) gave \(other) instead of \(result)")
                restored = live
            }
            let current = statuses(engine)
            try requireMonotonic(from: seen, to: current, published: result.changes, by: event)
            try requirePrivacy(engine, after: event)
            seen = current
        }
        if let restored {
            try require(
                restored.encodedState() == engine.encodedState(),
                "the restored engine's state drifted from the live one"
            )
            try require(details(restored) == details(engine), "the restored engine's sheets differ from the live one's")
            for user in EngineScript.users {
                try require(
                    restored.unreadCounts(user: user, conversations: [])
                        == engine.unreadCounts(user: user, conversations: []),
                    "the restored engine's unread counts for \(user) differ from the live one's"
                )
            }
        }
        return engine
    }

    /// The engine after the script of `input` (empty if the script breaks an invariant).
    static func state(after input: [UInt8]) -> ReceiptEngine {
        (try? run(input)) ?? ReceiptEngine(configuration: configuration)
    }

    /// The status of every message id of every conversation (nil where none exists), in
    /// `EngineScript` order.
    static func statuses(_ engine: ReceiptEngine) -> [MessageStatus?] {
        EngineScript.conversations.flatMap { conversation in
            EngineScript.messages.map { engine.status(conversation: conversation, message: $0) }
        }
    }

    static func details(
        _ engine: ReceiptEngine,
        in conversations: [String] = EngineScript.conversations
    ) -> [ReadDetail?] {
        conversations.flatMap { conversation in
            EngineScript.messages.map { engine.readDetail(conversation: conversation, message: $0) }
        }
    }

    static func requireNoOp(_ again: ApplyResult, after first: ApplyResult, of event: Event) throws(InvariantViolation)
    {
        try require(again.changes.isEmpty, "applying \(event) a second time changed \(again.changes)")
        switch first.outcome {
        case .accepted, .duplicate:
            try require(again.outcome == .duplicate, "\(event) again was \(again.outcome), not a duplicate")
        case .rejected:
            try require(again.outcome == first.outcome, "\(event) again was \(again.outcome), first \(first.outcome)")
        }
    }

    static func requireMonotonic(
        from before: [MessageStatus?],
        to after: [MessageStatus?],
        published changes: [MessageStatus],
        by event: Event
    ) throws(InvariantViolation) {
        for change in changes {
            let current =
                after.first { $0?.conversation == change.conversation && $0?.message == change.message } ?? nil
            try require(
                current == change,
                "\(event) published \(change), but the status is \(String(describing: current))"
            )
        }
        for case let (old?, new?) in zip(before, after) where new != old && new.sequence == old.sequence {
            let key = "\(new.conversation)/\(new.message)"
            try require(new.status >= old.status, "\(event) took \(key) from \(old.status) down to \(new.status)")
            try require(
                old.deliveredAt == nil || new.deliveredAt == old.deliveredAt,
                "\(event) moved \(key)'s delivered time"
            )
            try require(old.readAt == nil || new.readAt == old.readAt, "\(event) moved \(key)'s read time")
            try require(changes.contains(new), "\(event) changed \(key) from \(old) to \(new) without publishing it")
        }
    }

    /// The private reader is never shown as a reader, and read counts agree with the sheet.
    /// Checks the sheets of the event's conversation (of both for a user-wide event): only they
    /// can have changed.
    static func requirePrivacy(_ engine: ReceiptEngine, after event: Event) throws(InvariantViolation) {
        let conversations = event.kind.conversation.map { [$0] } ?? EngineScript.conversations
        for case let detail? in details(engine, in: conversations) {
            let message = "\(detail.status.conversation)/\(detail.status.message)"
            try require(
                !detail.read.contains { $0.user == EngineScript.privateReader },
                "\(message) lists the private reader as a reader"
            )
            try require(
                detail.delivered.allSatisfy { $0.readAt == nil } && detail.notDelivered.allSatisfy { $0.readAt == nil },
                "\(message) shows a read time of a recipient who did not visibly read"
            )
            try require(
                detail.read.count == detail.status.readCount,
                "\(message) counts \(detail.status.readCount) reads but lists \(detail.read.count)"
            )
            try require(
                detail.read.count + detail.delivered.count == detail.status.deliveredCount
                    && detail.read.count + detail.delivered.count + detail.notDelivered.count
                        == detail.status.recipientCount,
                "\(message)'s sheet disagrees with its counts: \(detail)"
            )
        }
    }

    /// A snapshot of `engine`, restored.
    static func roundTrip(_ engine: ReceiptEngine) throws(InvariantViolation) -> ReceiptEngine {
        let restored = try engine.requireSnapshotRoundTrip("a live engine", configuration: configuration)
        try require(details(restored) == details(engine), "a snapshot round trip changed the sheets")
        return restored
    }
}
