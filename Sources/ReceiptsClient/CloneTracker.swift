import ReceiptsCore
import ReceiptsWire

/// The zguide's Clone pattern for one subscription, without I/O: decides, per conversation,
/// which published updates reach the consumer and when a snapshot must repair a gap, a new
/// publisher run or updates the consumer had no room for.
///
/// What the consumer sees per conversation is in order and never goes back: an update whose
/// message already showed a newer status (more delivered, more read, a higher status) is
/// skipped, so a snapshot repair and the live stream can overlap freely.
///
/// Per conversation it follows one worker's stream: the worker it first heard the conversation
/// from, then the worker whose snapshot repaired it last. When a conversation moves between
/// workers (SCALING.md) its new owner publishes it under its own publisher run, sequence restarting;
/// an update from another worker than the one followed is therefore repaired like a new publisher run,
/// and the snapshot (asked of the owner) decides which worker is followed from then on.
struct CloneTracker: Sendable {
    /// What to do after an update or a snapshot arrived.
    struct Decision: Equatable, Sendable {
        /// Hand these to the consumer, in order (maybe none: a stale or repeated update).
        var emit: [StatusUpdate]
        /// Fetch a snapshot of this conversation and pass it to ``snapshotArrived(_:publisherRun:sequence:from:)``;
        /// its updates arriving meanwhile are held.
        var repair: String?

        static func emit(_ updates: [StatusUpdate]) -> Decision { Decision(emit: updates, repair: nil) }
        static func repair(_ conversation: String) -> Decision { Decision(emit: [], repair: conversation) }
    }

    /// An update that arrived while a snapshot was awaited, and the worker that published it.
    private struct Held: Sendable {
        var worker: Int
        var update: StatusUpdate
    }

    private enum Phase: Sendable {
        /// Following the stream; the last update applied had `sequence` in `publisherRun`.
        case live(publisherRun: UInt64, sequence: UInt64)
        /// A snapshot was asked for; updates wait here.
        case repairing(held: [Held])
    }

    private struct Conversation: Sendable {
        var phase: Phase
        /// The worker whose stream is followed (nil until one is heard or snapshotted).
        var source: Int?
        /// The last status shown per message, to keep the consumer's view from going back.
        var shown: [String: MessageStatus] = [:]
    }

    /// The most messages remembered per conversation before the oldest (lowest message
    /// sequence) half is forgotten; forgotten messages are compared by nothing but order.
    static let shownLimit = 4096

    private var conversations: [String: Conversation] = [:]

    /// A tracker that knows no conversation yet.
    init() {}

    /// Marks a conversation as waiting for its first snapshot (a one-conversation
    /// subscription starts from the current state, not from whatever is published next).
    mutating func expectSnapshot(of conversation: String) {
        let shown = conversations[conversation]?.shown ?? [:]
        let source = conversations[conversation]?.source
        let held: [Held]
        if case .repairing(let waiting)? = conversations[conversation]?.phase { held = waiting } else { held = [] }
        conversations[conversation] = Conversation(phase: .repairing(held: held), source: source, shown: shown)
    }

    /// Whether a snapshot of the conversation is awaited.
    func isRepairing(_ conversation: String) -> Bool {
        if case .repairing? = conversations[conversation]?.phase { return true }
        return false
    }

    /// Takes one published update.
    /// - Parameters:
    ///   - update: The update.
    ///   - worker: The ordinal of the worker that published it.
    /// - Returns: What to hand to the consumer, or the conversation to repair.
    mutating func receive(_ update: StatusUpdate, from worker: Int) -> Decision {
        let id = update.status.conversation
        guard var conversation = conversations[id] else {
            // First sight: the subscription starts here for this conversation.
            var fresh = Conversation(
                phase: .live(publisherRun: update.publisherRun, sequence: update.sequence),
                source: worker
            )
            let emitted = Self.show(update, in: &fresh)
            conversations[id] = fresh
            return .emit(emitted)
        }
        switch conversation.phase {
        case .repairing(var held):
            held.append(Held(worker: worker, update: update))
            conversation.phase = .repairing(held: held)
            conversations[id] = conversation
            return .emit([])
        case .live(let publisherRun, let sequence):
            // Another worker publishing it means it moved (or is a stale update of its former
            // owner): the owner's snapshot tells which.
            let sameStream = conversation.source == nil || conversation.source == worker
            let step =
                sameStream
                ? StreamStep(
                    publisherRun: update.publisherRun,
                    sequence: update.sequence,
                    afterRun: publisherRun,
                    sequence: sequence
                ) : .gap
            if step == .seen { return .emit([]) }
            guard step == .next else {
                conversation.phase = .repairing(held: [Held(worker: worker, update: update)])
                conversations[id] = conversation
                return .repair(id)
            }
            conversation.phase = .live(publisherRun: publisherRun, sequence: update.sequence)
            let emitted = Self.show(update, in: &conversation)
            conversations[id] = conversation
            return .emit(emitted)
        }
    }

    /// Marks a conversation whose update the consumer had no room for: it is repaired from a
    /// snapshot, and live updates wait until then.
    mutating func lost(_ update: StatusUpdate) {
        let id = update.status.conversation
        var conversation = conversations[id] ?? Conversation(phase: .repairing(held: []))
        // The dropped update was already counted as shown; forget that so the repair shows it.
        if conversation.shown[update.status.message] == update.status {
            conversation.shown[update.status.message] = nil
        }
        if case .live = conversation.phase { conversation.phase = .repairing(held: []) }
        conversations[id] = conversation
    }

    /// Takes a snapshot asked for by ``Decision/repair(_:)`` or ``expectSnapshot(of:)``.
    ///
    /// The worker that answered owns the conversation: its stream is followed from now on.
    /// Held updates another worker published are dropped (its former owner's last ones are
    /// covered by the snapshot), and the conversation is asked for once more in case that
    /// worker was a newer owner than the one that answered.
    /// - Parameters:
    ///   - snapshot: The conversation's state.
    ///   - publisherRun: The worker's publisher run at the snapshot.
    ///   - sequence: The conversation's last update sequence the snapshot covers.
    ///   - worker: The ordinal of the worker that answered.
    /// - Returns: What to hand to the consumer (statuses the consumer has not seen, then held
    ///   updates after the snapshot), or another conversation repair if the held updates
    ///   still have a gap or came from another worker.
    mutating func snapshotArrived(
        _ snapshot: ConversationSnapshot,
        publisherRun: UInt64,
        sequence: UInt64,
        from worker: Int
    ) -> Decision {
        let id = snapshot.conversation
        var conversation = conversations[id] ?? Conversation(phase: .repairing(held: []))
        conversation.source = worker
        var held: [Held] = []
        if case .repairing(let waiting) = conversation.phase { held = waiting }
        let fromElsewhere = held.contains { $0.worker != worker }
        held.removeAll { $0.worker != worker }
        var emitted: [StatusUpdate] = []
        for status in snapshot.messages {
            emitted += Self.show(
                StatusUpdate(publisherRun: publisherRun, sequence: sequence, status: status),
                in: &conversation
            )
        }
        var position = (publisherRun: publisherRun, sequence: sequence)
        for (index, entry) in held.enumerated() {
            let update = entry.update
            let step = StreamStep(
                publisherRun: update.publisherRun,
                sequence: update.sequence,
                afterRun: position.publisherRun,
                sequence: position.sequence
            )
            if step == .seen { continue }
            guard step == .next else {
                conversation.phase = .repairing(held: Array(held[index...]))
                conversations[id] = conversation
                return Decision(emit: emitted, repair: id)
            }
            position.sequence = update.sequence
            emitted += Self.show(update, in: &conversation)
        }
        guard !fromElsewhere else {
            // The updates from here on wait for the second snapshot, which starts after them.
            conversation.phase = .repairing(held: [])
            conversations[id] = conversation
            return Decision(emit: emitted, repair: id)
        }
        conversation.phase = .live(publisherRun: position.publisherRun, sequence: position.sequence)
        conversations[id] = conversation
        return .emit(emitted)
    }

    /// Takes the answer that the conversation does not exist (yet).
    /// - Returns: Nothing to show; or, if updates of it arrived meanwhile (so it exists now),
    ///   another repair.
    mutating func absent(_ conversation: String) -> Decision {
        if case .repairing(let held)? = conversations[conversation]?.phase, !held.isEmpty {
            return .repair(conversation)
        }
        // Its first update will start it, as for a conversation seen for the first time.
        conversations[conversation] = nil
        return .emit([])
    }

    /// The update if it is new to the consumer: no count or status below what its message
    /// already showed, and not the very status shown last.
    private static func show(_ update: StatusUpdate, in conversation: inout Conversation) -> [StatusUpdate] {
        let status = update.status
        if let shown = conversation.shown[status.message] {
            if status == shown || isOlder(status, than: shown) { return [] }
        }
        conversation.shown[status.message] = status
        if conversation.shown.count > shownLimit { forgetOldest(&conversation.shown) }
        return [update]
    }

    /// Whether `status` is behind `shown` in any way a status can only move forward.
    static func isOlder(_ status: MessageStatus, than shown: MessageStatus) -> Bool {
        status.status < shown.status || status.deliveredCount < shown.deliveredCount
            || status.readCount < shown.readCount
    }

    private static func forgetOldest(_ shown: inout [String: MessageStatus]) {
        let cut = shown.values.map(\.sequence).sorted()[shown.count / 2]
        shown = shown.filter { $0.value.sequence >= cut }
    }
}
