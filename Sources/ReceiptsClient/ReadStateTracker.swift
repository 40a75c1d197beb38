import ReceiptsCore
import ReceiptsWire

/// The zguide's Clone pattern for one user's read-state topic, without I/O: decides which
/// published `ReadStateUpdate`s reach the consumer and when a worker's per-user snapshot (its
/// `UnreadCounts` for the user) must repair a gap, a new publisher run or an update the consumer
/// had no room for.
///
/// A user's conversations live on several workers, and each publishes on the user's topic under
/// its own publisher run and sequence. So the tracker follows one stream per worker and repairs
/// each from that worker's snapshot. What the consumer sees is per conversation and per thread:
/// an update is shown when its conversation's state, or its thread's, differs from the last one
/// shown, so a repair and the live stream may overlap freely.
struct ReadStateTracker: Sendable {
    /// What to do after an update or a snapshot arrived.
    struct Decision: Equatable, Sendable {
        /// Hand these to the consumer, in order.
        var emit: [ReadStateUpdate] = []
        /// Ask this worker for the user's unread counts and pass them to
        /// ``snapshotArrived(_:publisherRun:sequence:from:owner:)``; its updates arriving meanwhile
        /// are held.
        var repair: Int?
    }

    private enum Stream: Sendable {
        /// Following the worker's stream; the last update applied had `sequence` in `publisherRun`.
        case live(publisherRun: UInt64, sequence: UInt64)
        /// A snapshot was asked for; the worker's updates wait here.
        case repairing(held: [ReadStateUpdate])
    }

    /// The user followed.
    let user: String
    private var streams: [Int: Stream] = [:]
    /// The last state shown per conversation.
    private var shown: [String: UnreadCount] = [:]
    /// The last state shown per thread.
    private var shownThreads: [ThreadKey: ThreadReadState] = [:]
    /// The worker each conversation's state came from last.
    private var sources: [String: Int] = [:]

    /// A tracker that has heard from no worker yet.
    init(user: String) {
        self.user = user
    }

    /// Marks a worker's stream as waiting for its snapshot (at the start, and for the
    /// slow-joiner snapshot), keeping what it holds.
    mutating func expectSnapshot(from worker: Int) {
        if case .repairing? = streams[worker] { return }
        streams[worker] = .repairing(held: [])
    }

    /// Whether a snapshot of the worker is awaited.
    func isRepairing(_ worker: Int) -> Bool {
        if case .repairing? = streams[worker] { return true }
        return false
    }

    /// Takes one published update.
    /// - Parameters:
    ///   - update: The update.
    ///   - worker: The ordinal of the worker that published it.
    /// - Returns: What to hand to the consumer, or the worker to repair.
    mutating func receive(_ update: ReadStateUpdate, from worker: Int) -> Decision {
        switch streams[worker] {
        case .repairing(var held)?:
            held.append(update)
            streams[worker] = .repairing(held: held)
            return Decision()
        case .live(let publisherRun, let sequence)?:
            let step = StreamStep(
                publisherRun: update.publisherRun,
                sequence: update.sequence,
                afterRun: publisherRun,
                sequence: sequence
            )
            if step == .seen { return Decision() }
            guard step == .next else {
                streams[worker] = .repairing(held: [update])
                return Decision(repair: worker)
            }
            streams[worker] = .live(publisherRun: publisherRun, sequence: update.sequence)
            return Decision(emit: show(update, from: worker))
        case nil:
            // A worker not heard from yet (a templated cluster's): what came before is unknown.
            streams[worker] = .repairing(held: [update])
            return Decision(repair: worker)
        }
    }

    /// Marks the stream of a worker whose update the consumer had no room for: it is repaired
    /// from a snapshot, and its live updates wait until then.
    mutating func lost(_ update: ReadStateUpdate, from worker: Int) {
        if shown[update.change.state.conversation] == update.change.state {
            shown[update.change.state.conversation] = nil
        }
        if let thread = update.change.thread, shownThreads[ThreadKey(thread)] == thread {
            shownThreads[ThreadKey(thread)] = nil
        }
        if case .repairing? = streams[worker] { return }
        streams[worker] = .repairing(held: [])
    }

    /// Takes a worker's snapshot asked for by a ``Decision/repair`` or ``expectSnapshot(from:)``.
    ///
    /// A conversation the worker owns whose state came from it last, and that the snapshot no
    /// longer lists, was left (its update was lost): it is shown as left. Held updates of another
    /// publisher run are dropped: from before a restart the snapshot covers them, and a newer
    /// run's are repaired once the socket's reconnection is seen.
    /// - Parameters:
    ///   - counts: The user's read state in each of their conversations on the worker.
    ///   - threads: The user's read state in each thread they hold a place in there.
    ///   - publisherRun: The run of the users' topics at the snapshot.
    ///   - sequence: The user topic's last sequence the snapshot covers.
    ///   - worker: The worker that answered.
    ///   - owner: The worker that owns a conversation, by the routing count.
    /// - Returns: The states the consumer has not seen, then held updates after the snapshot; or
    ///   another repair of the worker if the held updates still have a gap.
    mutating func snapshotArrived(
        _ counts: [UnreadCount],
        threads: [ThreadReadState] = [],
        publisherRun: UInt64,
        sequence: UInt64,
        from worker: Int,
        owner: (String) -> Int
    ) -> Decision {
        var held: [ReadStateUpdate] = []
        if case .repairing(let waiting)? = streams[worker] { held = waiting.filter { $0.publisherRun == publisherRun } }
        var decision = Decision()
        var listed = Set<String>()
        for count in counts {
            listed.insert(count.conversation)
            decision.emit += show(snapshotUpdate(count, publisherRun: publisherRun, sequence: sequence), from: worker)
        }
        for thread in threads {
            guard let count = counts.first(where: { $0.conversation == thread.conversation }) else { continue }
            decision.emit += show(
                snapshotUpdate(count, thread: thread, publisherRun: publisherRun, sequence: sequence),
                from: worker
            )
        }
        let left = sources.filter { $0.value == worker && !listed.contains($0.key) && owner($0.key) == worker }
        for conversation in left.keys.sorted() {
            guard var state = shown[conversation], !state.hasLeft else { continue }
            state.hasLeft = true
            decision.emit += show(snapshotUpdate(state, publisherRun: publisherRun, sequence: sequence), from: worker)
        }
        var position = sequence
        for (index, update) in held.enumerated() {
            let step = StreamStep(
                publisherRun: update.publisherRun,
                sequence: update.sequence,
                afterRun: publisherRun,
                sequence: position
            )
            if step == .seen { continue }
            guard step == .next else {
                streams[worker] = .repairing(held: Array(held[index...]))
                decision.repair = worker
                return decision
            }
            position = update.sequence
            decision.emit += show(update, from: worker)
        }
        streams[worker] = .live(publisherRun: publisherRun, sequence: position)
        return decision
    }

    /// A snapshot's state (and a thread's) as an update (a snapshot's states carry no time).
    private func snapshotUpdate(
        _ state: UnreadCount,
        thread: ThreadReadState? = nil,
        publisherRun: UInt64,
        sequence: UInt64
    ) -> ReadStateUpdate {
        ReadStateUpdate(
            publisherRun: publisherRun,
            sequence: sequence,
            change: ReadStateChange(user: user, state: state, thread: thread, time: Timestamp(milliseconds: 0))
        )
    }

    /// The update if its conversation's state, or its thread's, differs from the one shown last.
    private mutating func show(_ update: ReadStateUpdate, from worker: Int) -> [ReadStateUpdate] {
        let state = update.change.state
        sources[state.conversation] = worker
        let conversationChanged = shown[state.conversation] != state
        shown[state.conversation] = state
        var threadChanged = false
        if let thread = update.change.thread {
            threadChanged = shownThreads[ThreadKey(thread)] != thread
            shownThreads[ThreadKey(thread)] = thread
        }
        return conversationChanged || threadChanged ? [update] : []
    }
}

/// A thread, as the tracker keys what it showed of it.
private struct ThreadKey: Hashable, Sendable {
    var conversation: String
    var thread: String

    init(_ state: ThreadReadState) {
        conversation = state.conversation
        thread = state.thread
    }
}
