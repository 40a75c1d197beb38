import ReceiptsCore
import Testing

/// Drives a `ReceiptEngine` the way the service does: one gateway source with increasing event
/// sequences and a server clock that moves one second per event unless told otherwise.
struct EngineHarness {
    var engine: ReceiptEngine
    var source = "gateway-1"
    var sequence: UInt64 = 0
    var now: Int64 = 1_700_000_000_000
    /// Every status change published so far, in order.
    var published: [MessageStatus] = []

    init(configuration: EngineConfiguration = .init()) {
        engine = ReceiptEngine(configuration: configuration)
    }

    /// Applies an event with the next event id; the clock first moves by `after` ms.
    @discardableResult
    mutating func apply(_ kind: EventKind, clientTime: Int64? = nil, after: Int64 = 1000) -> ApplyResult {
        sequence += 1
        now += after
        let event = Event(
            id: EventID(source: source, sequence: sequence),
            clientTime: clientTime.map(Timestamp.init),
            kind: kind
        )
        let result = engine.apply(event, at: Timestamp(milliseconds: now))
        published += result.changes
        return result
    }

    /// Applies an event and expects it accepted (not held).
    @discardableResult
    mutating func accept(
        _ kind: EventKind,
        clientTime: Int64? = nil,
        after: Int64 = 1000,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> ApplyResult {
        let result = apply(kind, clientTime: clientTime, after: after)
        #expect(result.outcome == .accepted(held: false), sourceLocation: sourceLocation)
        return result
    }

    /// Applies an event and returns the rejection reason (nil if not rejected).
    mutating func rejection(_ kind: EventKind, after: Int64 = 1000) -> RejectReason? {
        if case .rejected(let rejection) = apply(kind, after: after).outcome { return rejection.reason }
        return nil
    }

    mutating func group(_ id: String, _ members: [String]) {
        accept(.conversationUpserted(conversation: id, kind: .group, members: members))
    }

    mutating func direct(_ id: String, _ a: String, _ b: String) {
        accept(.conversationUpserted(conversation: id, kind: .direct, members: [a, b]))
    }

    mutating func send(_ conversation: String, _ message: String, from sender: String, system: Bool = false) {
        accept(.messageSent(conversation: conversation, message: message, sender: sender, isSystem: system))
    }

    mutating func deliver(_ conversation: String, _ user: String, _ message: String, clientTime: Int64? = nil) {
        accept(.delivered(conversation: conversation, user: user, message: message), clientTime: clientTime)
    }

    mutating func read(_ conversation: String, _ user: String, _ message: String?, clientTime: Int64? = nil) {
        accept(.read(conversation: conversation, user: user, message: message), clientTime: clientTime)
    }

    /// The status of a message, which must exist.
    func status(
        _ conversation: String,
        _ message: String,
        sourceLocation: SourceLocation = #_sourceLocation
    )
        -> MessageStatus
    {
        let status = engine.status(conversation: conversation, message: message)
        #expect(status != nil, sourceLocation: sourceLocation)
        return status!
    }

    /// What the sender (or `viewer`) sees under a message.
    func text(_ conversation: String, _ message: String, viewer: String? = nil, prefersCounts: Bool = false) -> String {
        let status = status(conversation, message)
        return DisplayText.text(
            for: status,
            viewer: Viewer(user: viewer ?? status.sender, prefersCounts: prefersCounts)
        )
    }

    func detail(_ conversation: String, _ message: String) -> ReadDetail {
        engine.readDetail(conversation: conversation, message: message)!
    }

    func unread(_ user: String, _ conversation: String) -> UnreadCount {
        engine.unreadCounts(user: user, conversations: [conversation]).first!
    }
}
