import ReceiptsCore

/// Deterministic events for the micro-benchmarks: `conversations` conversations of `members`
/// members (direct when two), each message followed by every recipient's delivery and read.
struct EventScript {
    let conversations: Int
    let members: Int
    private var sequence: UInt64 = 0

    init(conversations: Int, members: Int) {
        self.conversations = conversations
        self.members = members
    }

    static let now = Timestamp(milliseconds: 1_750_000_000_000)

    private mutating func event(_ kind: EventKind) -> Event {
        sequence += 1
        return Event(id: EventID(source: "bench", sequence: sequence), kind: kind)
    }

    private func user(_ conversation: Int, _ member: Int) -> String { "u\(conversation * members + member)" }

    /// The upserts creating every conversation.
    mutating func setup() -> [Event] {
        (0..<conversations).map { c in
            event(
                .conversationUpserted(
                    conversation: "c\(c)",
                    kind: members == 2 ? .direct : .group,
                    members: (0..<members).map { user(c, $0) }
                )
            )
        }
    }

    /// `count` events of the message → deliveries → reads cycle, round-robin over conversations.
    mutating func receipts(count: Int) -> [Event] {
        var events: [Event] = []
        events.reserveCapacity(count)
        let perMessage = 1 + 2 * (members - 1)
        var step = 0
        while events.count < count {
            let round = step / conversations
            let c = step % conversations
            let m = "m\(round / perMessage)"
            let phase = round % perMessage
            let conversation = "c\(c)"
            if phase == 0 {
                events.append(
                    event(.messageSent(conversation: conversation, message: m, sender: user(c, 0), isSystem: false))
                )
            } else if phase < members {
                events.append(event(.delivered(conversation: conversation, user: user(c, phase), message: m)))
            } else {
                events.append(event(.read(conversation: conversation, user: user(c, phase - members + 1), message: m)))
            }
            step += 1
        }
        return events
    }

    /// An engine with every conversation created.
    mutating func engine() -> ReceiptEngine {
        var engine = ReceiptEngine()
        for event in setup() { _ = engine.apply(event, at: Self.now) }
        return engine
    }
}
