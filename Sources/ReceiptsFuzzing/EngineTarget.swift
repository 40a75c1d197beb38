import ReceiptsCore

/// The engine, on scripts derived from the input (`EngineScript`), checked after every step:
///
/// - a message's status never goes down, its delivered and read times never change once set,
///   and it never disappears (except by retention);
/// - every status change is published, and what is published is the message's status;
/// - the private reader's reads never show: their sheet lists them as delivered, never as
///   readers, and read counts agree with the sheets;
/// - applying an event a second time is a duplicate (or the same rejection) and publishes
///   nothing;
/// - a reference engine applies every event once, and from halfway on it is one restored from
///   a snapshot: it gives the same result for every event, and ends in the same state, sheets
///   and unread counts as the engine that applied every event twice.
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
    /// - Throws: `InvariantViolation` naming the first invariant a step broke.
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
        var reference = engine
        let steps = EngineScript.steps(input)
        var events: [Event] = []
        var seen = statuses(engine)
        for (i, step) in steps.enumerated() {
            if i == steps.count / 2 { reference = try roundTrip(reference) }
            let event: Event
            switch step {
            case .expire(let age):
                let cutoff = Timestamp(milliseconds: now - age)
                let removed = engine.expireMessages(sentBefore: cutoff)
                let removedInReference = reference.expireMessages(sentBefore: cutoff)
                try require(
                    removedInReference == removed,
                    "expiry removed \(removed) messages, but \(removedInReference) in the reference"
                )
                seen = statuses(engine)
                try requirePrivacy(engine)
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
            try requireNoOp(engine.apply(event, at: at), applyingAgain: event, after: result)
            let once = reference.apply(event, at: at)
            try require(once == result, "\(event) gave \(result), but \(once) in the reference")
            let current = statuses(engine)
            try requireStatusesAdvance(from: seen, to: current, publishing: result.changes, by: event)
            try requirePrivacy(engine, after: event, outcome: result.outcome)
            seen = current
        }
        try require(reference.encodedState() == engine.encodedState(), "the reference's state differs at the end")
        try require(details(reference) == details(engine), "the reference's sheets differ at the end")
        for user in EngineScript.users {
            try require(
                reference.unreadCounts(user: user, conversations: [])
                    == engine.unreadCounts(user: user, conversations: []),
                "the reference's unread counts for \(user) differ at the end"
            )
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

    /// The "Read by" sheet of every message id of every conversation, in `EngineScript` order.
    static func details(_ engine: ReceiptEngine) -> [ReadDetail?] {
        EngineScript.conversations.flatMap { conversation in
            EngineScript.messages.map { engine.readDetail(conversation: conversation, message: $0) }
        }
    }

    /// The second application of `event` is a duplicate (or the same rejection) and
    /// publishes nothing.
    static func requireNoOp(
        _ again: ApplyResult,
        applyingAgain event: Event,
        after first: ApplyResult
    ) throws(InvariantViolation) {
        try require(again.changes.isEmpty, "applying \(event) a second time changed \(again.changes)")
        try require(again.readStates.isEmpty, "applying \(event) a second time changed \(again.readStates)")
        switch first.outcome {
        case .accepted, .duplicate:
            try require(again.outcome == .duplicate, "\(event) again was \(again.outcome), not a duplicate")
        case .rejected:
            try require(again.outcome == first.outcome, "\(event) again was \(again.outcome), first \(first.outcome)")
        }
    }

    /// Between two steps no message disappears, no status goes down, no delivered or read time
    /// moves, every change is published, and every published status is the message's status.
    static func requireStatusesAdvance(
        from before: [MessageStatus?],
        to after: [MessageStatus?],
        publishing changes: [MessageStatus],
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
        for case let (old?, new) in zip(before, after) where new != old {
            let key = "\(old.conversation)/\(old.message)"
            guard let new, new.sequence == old.sequence else {
                throw InvariantViolation(description: "\(event) made \(key) disappear: now \(String(describing: new))")
            }
            try require(new.status >= old.status, "\(event) took \(key) from \(old.status) down to \(new.status)")
            try require(
                old.deliveredAt == nil || new.deliveredAt == old.deliveredAt,
                "\(event) moved \(key)'s delivered time"
            )
            try require(old.readAt == nil || new.readAt == old.readAt, "\(event) moved \(key)'s read time")
            try require(changes.contains(new), "\(event) changed \(key) from \(old) to \(new) without publishing it")
        }
    }

    /// No sheet lists the private reader as a reader, and every sheet agrees with its counts.
    /// After an accepted, applied read by the private reader, the sheets of the messages it
    /// covers list them as delivered.
    static func requirePrivacy(
        _ engine: ReceiptEngine,
        after event: Event? = nil,
        outcome: EventOutcome = .duplicate
    ) throws(InvariantViolation) {
        let reader = EngineScript.privateReader
        for case let detail? in details(engine) {
            let message = "\(detail.status.conversation)/\(detail.status.message)"
            try require(!detail.read.contains { $0.user == reader }, "\(message) lists the private reader as a reader")
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
        guard case .read(let conversation, reader, let target, nil)? = event?.kind, outcome == .accepted(held: false)
        else {
            return
        }
        // The read covers its target's timeline: the main one, or a reply's thread.
        let read = target.flatMap { engine.status(conversation: conversation, message: $0) }
        let upTo = read?.sequence ?? .max
        for message in EngineScript.messages {
            guard let detail = engine.readDetail(conversation: conversation, message: message),
                detail.status.sequence <= upTo, detail.status.threadRoot == read?.threadRoot
            else { continue }
            try require(
                !detail.notDelivered.contains { $0.user == reader },
                "\(conversation)/\(message) lists the private reader as not delivered after they read it"
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
