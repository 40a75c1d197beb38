import ReceiptsCore
import Testing

/// The anti-replay window of each event source: an id inside it is a duplicate only if it was
/// accepted; an id below it cannot be told apart, and is answered as such, never as a
/// duplicate ("applied before"), which would lose a never-seen event silently.
struct ReplayWindowTests {
    /// A window of 64 sequences (the smallest), so that tests pass it with few events.
    static let configuration = EngineConfiguration(duplicateWindow: 64)
    static let now = Timestamp(milliseconds: 1_700_000_000_000)

    /// An engine with group `g` of A and B (event gw#1) and message m1 from A (gw#100), so the
    /// window of `gw` covers 37...100.
    static func engine() -> ReceiptEngine {
        var engine = ReceiptEngine(configuration: configuration)
        #expect(
            engine.apply(
                event(1, .conversationUpserted(conversation: "g", kind: .group, members: ["A", "B"])),
                at: now
            )
            .outcome == .accepted(held: false)
        )
        #expect(
            engine.apply(
                event(100, .messageSent(conversation: "g", message: "m1", sender: "A", isSystem: false)),
                at: now
            )
            .outcome == .accepted(held: false)
        )
        return engine
    }

    static func event(_ sequence: UInt64, _ kind: EventKind, source: String = "gw") -> Event {
        Event(id: EventID(source: source, sequence: sequence), kind: kind)
    }

    /// The rejection of an outcome that must be `outsideReplayWindow`, or nil after recording
    /// the issue.
    static func outsideWindow(
        _ outcome: EventOutcome,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> Rejection? {
        guard case .rejected(let rejection) = outcome, rejection.reason == .outsideReplayWindow else {
            Issue.record(
                "expected a rejection as outside_replay_window, got \(outcome)",
                sourceLocation: sourceLocation
            )
            return nil
        }
        return rejection
    }

    @Test func anIDFarBelowTheWindowThatWasNeverSeenIsNotADuplicate() {
        var engine = Self.engine()
        let state = engine.encodedState()
        let lost = Self.event(2, .read(conversation: "g", user: "B", message: "m1"))
        let result = engine.apply(lost, at: Self.now)
        if let rejection = Self.outsideWindow(result.outcome) {
            #expect(rejection.detail.contains("gw#2"), "\(rejection.detail)")
            #expect(rejection.detail.contains("cannot tell whether it was applied"), "\(rejection.detail)")
            #expect(rejection.ownerWorker == nil)
        }
        #expect(result.changes.isEmpty)
        #expect(engine.encodedState() == state, "an event outside the window changed the state")
        #expect(engine.status(conversation: "g", message: "m1")?.status == .notDelivered)
        // Nothing is recorded: the same id gets the same answer again.
        #expect(engine.apply(lost, at: Self.now).outcome == result.outcome)
    }

    @Test func anIDSeenInsideTheWindowIsStillADuplicate() {
        var engine = Self.engine()
        let read = Self.event(50, .read(conversation: "g", user: "B", message: "m1"))
        #expect(engine.apply(read, at: Self.now).outcome == .accepted(held: false))
        #expect(engine.apply(read, at: Self.now).outcome == .duplicate)
        // An id inside the window that was never seen is new, in any order.
        let unseen = Self.event(40, .delivered(conversation: "g", user: "B", message: "m1"))
        #expect(engine.apply(unseen, at: Self.now).outcome == .accepted(held: false))
        // Once the window has passed it, even an id that was accepted cannot be told apart.
        #expect(
            engine.apply(Self.event(1000, .markedUnread(conversation: "g", user: "B")), at: Self.now).outcome
                == .accepted(held: false)
        )
        _ = Self.outsideWindow(engine.apply(read, at: Self.now).outcome)
    }

    @Test func theWindowsEdgeIsExact() {
        // The window of 64 below 100 covers 37...100: 37 is the oldest it still knows.
        var engine = Self.engine()
        let oldestKnown = Self.event(37, .delivered(conversation: "g", user: "B", message: "m1"))
        #expect(engine.apply(oldestKnown, at: Self.now).outcome == .accepted(held: false))
        #expect(engine.apply(oldestKnown, at: Self.now).outcome == .duplicate)
        _ = Self.outsideWindow(
            engine.apply(Self.event(36, .delivered(conversation: "g", user: "B", message: "m1")), at: Self.now).outcome
        )
        // Another source has a window of its own, and a source without one takes any sequence.
        #expect(
            engine.apply(Self.event(2, .read(conversation: "g", user: "B", message: "m1"), source: "gw2"), at: Self.now)
                .outcome == .accepted(held: false)
        )
    }

    @Test func aRestoredOrReplayedEngineGivesTheSameAnswer() throws {
        var engine = Self.engine()
        let state = engine.encodedState()
        let events = [
            Self.event(2, .memberJoined(conversation: "g", user: "C")),
            Self.event(99, .read(conversation: "g", user: "B", message: "m1")),
            Self.event(2, .memberJoined(conversation: "g", user: "C")),
        ]
        var live = [engine.apply(events[0], at: Self.now).outcome]
        #expect(engine.encodedState() == state, "C joined through an id outside the window")
        live += events.dropFirst().map { engine.apply($0, at: Self.now).outcome }
        _ = Self.outsideWindow(live[0])
        #expect(live[1] == .accepted(held: false))
        #expect(live[2] == live[0])
        // A snapshot keeps the windows: the restored engine answers the same.
        var restored = try ReceiptEngine(restoringFrom: engine.encodedState(), configuration: Self.configuration)
        #expect(restored.apply(events[0], at: Self.now).outcome == live[0])
        // Replaying the same events from the start decides each one as it was decided live.
        var replayed = Self.engine()
        #expect(events.map { replayed.replay($0, at: Self.now) } == live)
        #expect(replayed.encodedState() == engine.encodedState())
    }
}
