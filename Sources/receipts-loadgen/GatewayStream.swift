import ReceiptsCore
import ReceiptsTestKit

/// The events one gateway sends, in order: its conversations' upserts first, then, per
/// conversation, each message followed by every recipient's delivery and then every
/// recipient's read, with some events sent twice.
///
/// Each gateway is its own event source ("gw<index>") with sequences 1, 2, 3, ...; a re-sent
/// event reuses its id, so the service must answer it as a duplicate and publish nothing.
struct GatewayStream {
    /// One conversation's progress through its current message.
    private struct Cursor {
        enum Phase {
            case send
            case deliver(Int)
            case read(Int)
        }

        let index: Int
        let id: String
        let kind: ConversationKind
        let members: [Int32]
        var message = 0
        var phase = Phase.send
        var recipients: [Int32] = []
    }

    let gateway: Int
    let source: String
    private let shape: WorkloadShape
    private var cursors: [Cursor] = []
    private var rng: SplitMix64
    private var sequence: UInt64 = 0
    private var recent: [Event] = []
    private var recentNext = 0
    private var roundRobin = 0

    /// (message, recipient) pairs of the messages sent so far: the receipts the state tracks.
    private(set) var receipts = 0

    /// Creates the stream of gateway `gateway` (it owns conversations `gateway`, `gateway + n`, ...).
    init(gateway: Int, shape: WorkloadShape) {
        self.gateway = gateway
        self.shape = shape
        source = "gw\(gateway)"
        rng = SplitMix64(seed: shape.seed &* 0x1000_0001 &+ UInt64(gateway))
        var index = gateway
        while index < shape.conversations {
            let direct = Double.random(in: 0..<1, using: &rng) < shape.directFraction
            let size = direct ? 2 : Int.random(in: shape.groupSizes, using: &rng)
            var members: [Int32] = []
            while members.count < size {
                let user = Int32.random(in: 0..<Int32(max(shape.users, size)), using: &rng)
                if !members.contains(user) { members.append(user) }
            }
            cursors.append(Cursor(index: index, id: "c\(index)", kind: direct ? .direct : .group, members: members))
            index += shape.gateways
        }
    }

    /// Members of all this gateway's conversations, counted once per (conversation, member).
    var memberCount: Int { cursors.reduce(0) { $0 + $1.members.count } }

    /// The upserts that create this gateway's conversations.
    mutating func setupEvents() -> [Event] {
        cursors.map { cursor in
            makeEvent(
                .conversationUpserted(
                    conversation: cursor.id,
                    kind: cursor.kind,
                    members: cursor.members.map(Self.user)
                )
            )
        }
    }

    /// The next event and the update it must cause (nil for a duplicate, which causes none).
    mutating func next() -> (event: Event, expects: UInt64?) {
        if shape.duplicateFraction > 0, !recent.isEmpty, Double.random(in: 0..<1, using: &rng) < shape.duplicateFraction
        {
            return (recent[Int.random(in: 0..<recent.count, using: &rng)], nil)
        }
        let c: Int
        if shape.messagesOnly {
            c = roundRobin
            roundRobin = (roundRobin + 1) % cursors.count
        } else {
            c = Int.random(in: 0..<cursors.count, using: &rng)
        }
        let (kind, expects) = Self.advance(&cursors[c], shape: shape, rng: &rng)
        if case .messageSent = kind { receipts += cursors[c].members.count - 1 }
        let event = makeEvent(kind)
        remember(event)
        return (event, expects)
    }

    private static func advance(
        _ cursor: inout Cursor,
        shape: WorkloadShape,
        rng: inout SplitMix64
    ) -> (EventKind, UInt64) {
        let message = "m\(cursor.message)"
        switch cursor.phase {
        case .send:
            let sender = cursor.members[Int.random(in: 0..<cursor.members.count, using: &rng)]
            cursor.recipients = cursor.members.filter { $0 != sender }
            let key = UpdateKey.make(conversation: cursor.index, message: cursor.message, delivered: 0, read: 0)
            if shape.messagesOnly {
                cursor.message += 1
            } else {
                cursor.phase = .deliver(0)
            }
            var mentions = Mentions.none
            if shape.mentionedPerMessage > 0 {
                mentions.users = cursor.recipients.prefix(shape.mentionedPerMessage).map(Self.user)
                mentions.everyone = Int.random(in: 0..<10, using: &rng) == 0
            }
            let replies =
                cursor.message > 0 && shape.replyShare > 0 && Double.random(in: 0..<1, using: &rng) < shape.replyShare
            return (
                .messageSent(
                    conversation: cursor.id,
                    message: message,
                    sender: Self.user(sender),
                    isSystem: false,
                    mentions: mentions,
                    thread: replies ? "m\(cursor.message - 1)" : nil
                ),
                key
            )
        case .deliver(let k):
            let key = UpdateKey.make(conversation: cursor.index, message: cursor.message, delivered: k + 1, read: 0)
            cursor.phase = k + 1 == cursor.recipients.count ? .read(0) : .deliver(k + 1)
            return (.delivered(conversation: cursor.id, user: Self.user(cursor.recipients[k]), message: message), key)
        case .read(let k):
            let key = UpdateKey.make(
                conversation: cursor.index,
                message: cursor.message,
                delivered: cursor.recipients.count,
                read: k + 1
            )
            if k + 1 == cursor.recipients.count {
                cursor.phase = .send
                cursor.message += 1
            } else {
                cursor.phase = .read(k + 1)
            }
            return (.read(conversation: cursor.id, user: Self.user(cursor.recipients[k]), message: message), key)
        }
    }

    private mutating func makeEvent(_ kind: EventKind) -> Event {
        sequence += 1
        return Event(id: EventID(source: source, sequence: sequence), kind: kind)
    }

    /// Keeps the last 256 events: re-sends stay well inside the service's anti-replay window.
    private mutating func remember(_ event: Event) {
        if recent.count < 256 {
            recent.append(event)
        } else {
            recent[recentNext] = event
            recentNext = (recentNext + 1) % 256
        }
    }

    private static func user(_ index: Int32) -> String { "u\(index)" }
}
