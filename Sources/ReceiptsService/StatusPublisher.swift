package import ReceiptsCore
import ReceiptsWire

/// Publishes durable status changes to an update sink, sequenced per conversation and
/// optionally coalesced per message; and durable read-state changes on their users' topics,
/// sequenced per user and never coalesced (each is a state the user's devices may show).
///
/// Sequences are assigned at publish time, so coalescing never leaves gaps: a subscriber
/// that sees a gap really lost updates (PUB drops at its high-water mark, and late joiners
/// miss the first ones) and repairs from a snapshot, whose sequence comes from `sequence(of:)`.
package final class StatusPublisher {
    private let sink: any UpdateSink
    private let windowMilliseconds: Int64
    /// Identifies this run of the worker; subscribers re-snapshot when it changes.
    package let publisherRun: UInt64
    /// Per conversation, at the engine's index of it (the high half of its key in
    /// `ApplyResult.changeKeys`): its id, the last sequence published and the topic frame (made
    /// once). Found by index and checked by id, not hashed by id: the worker published one
    /// update per changed message, and hashing the conversation's id was a tenth of its time.
    ///
    /// An engine renumbers its conversations when it drops released ones (a committed move, an
    /// import bringing one back), and a status decided before may still carry its old index: a
    /// slot found holding another conversation's stream is sorted out by id (`relocate`).
    private var conversations: [Stream] = []
    /// Where each conversation's stream is in `conversations`.
    private var slots: [String: Int] = [:]
    /// Streams of conversations that lost their slot and have not published since: one that
    /// moved away and comes back in this run goes on with its numbering.
    private var parked: [String: Stream] = [:]
    /// Per user: the last read-state sequence published and the topic frame.
    private var users: [String: Stream] = [:]
    /// The run of the users' topics (their updates' and unread counts' `epoch`): this run of the
    /// worker, moved on each time numbering starts again after a time when nobody followed a
    /// user topic, since reads made meanwhile were numbered nowhere.
    private(set) var userRun: UInt64
    /// Whether read states are numbered and handed over now (some subscriber follows a user topic).
    private var numbersUsers: Bool
    /// Statuses waiting for their window to close, by message, each with the engine's key it
    /// came with. By id, not by key: a key decided before a renumbering can name another
    /// conversation's message after it.
    private var held: [MessageKey: (status: MessageStatus, key: UInt64)] = [:]
    /// Messages in the order their window closes (the window is constant, so FIFO order is
    /// deadline order).
    private var deadlines = FIFOQueue<(deadline: Int64, message: MessageKey)>()
    private let onPublished: (Int) -> Void
    private let onReadStatesPublished: (Int) -> Void

    /// - Parameters:
    ///   - sink: Where updates go (receiptd's PUB socket); this publisher is its only user, on its thread.
    ///   - windowMilliseconds: How long a message's update is held to coalesce later ones (0: publish at once).
    ///   - publisherRun: This run of the worker, in every update.
    ///   - onPublished: Called with the number of status updates each submit or flush published.
    ///   - onReadStatesPublished: Called with the number of read-state updates each submit published.
    package init(
        sink: any UpdateSink,
        windowMilliseconds: Int,
        publisherRun: UInt64,
        onPublished: @escaping (Int) -> Void,
        onReadStatesPublished: @escaping (Int) -> Void = { _ in }
    ) {
        self.sink = sink
        self.windowMilliseconds = Int64(windowMilliseconds)
        self.publisherRun = publisherRun
        userRun = publisherRun
        numbersUsers = sink.followsUserTopics
        self.onPublished = onPublished
        self.onReadStatesPublished = onReadStatesPublished
    }

    /// The last sequence published for a conversation in this run (0 if none).
    func sequence(of conversation: String) -> UInt64 {
        slots[conversation].map { conversations[$0].sequence } ?? parked[conversation]?.sequence ?? 0
    }

    /// Whether read states are to be built and handed over, asked before each frame: whether
    /// some subscriber follows any user topic (the sink says). When numbering starts again after
    /// a time without followers, the users' topics get a new run: a device whose snapshot is from
    /// before (when reads went unnumbered) sees the new run and takes a new snapshot.
    func numbersReadStates() -> Bool {
        let follows = sink.followsUserTopics
        if follows && !numbersUsers {
            userRun &+= 1
            users.removeAll()
        }
        numbersUsers = follows
        return follows
    }

    /// The last read-state sequence published on a user's topic in `userRun` (0 if none).
    func sequence(ofUser user: String) -> UInt64 {
        users[user]?.sequence ?? 0
    }

    /// Publishes durable read-state changes on their users' topics, now; skips them (numbering
    /// none) while no subscriber follows any user topic: one who starts following takes a
    /// snapshot first, and the new `userRun` tells one whose snapshot is older.
    package func submit(readStates: [ReadStateChange]) {
        guard numbersUsers else { return }
        for change in readStates {
            let entry = nextUserUpdate(of: change.user)
            sink.publish(
                topic: entry.topic,
                update: .readState(
                    ReadStateUpdate(publisherRun: userRun, sequence: entry.sequence, change: change)
                )
            )
        }
        onReadStatesPublished(readStates.count)
    }

    /// Hands over durable changes: published now, or at the end of their message's window.
    ///
    /// - Parameter keys: The engine's key of each change, same order (`ApplyResult.changeKeys`).
    package func submit(_ changes: [MessageStatus], keys: [UInt64], now: Int64) {
        guard windowMilliseconds > 0 else {
            for (status, key) in zip(changes, keys) { publish(status, key: key) }
            onPublished(changes.count)
            return
        }
        for (status, key) in zip(changes, keys) {
            let message = MessageKey(conversation: status.conversation, sequence: status.sequence)
            if held.updateValue((status, key), forKey: message) == nil {
                deadlines.append((now + windowMilliseconds, message))
            }
        }
    }

    /// Milliseconds until the next window closes, or nil if nothing is held.
    func millisecondsUntilDue(now: Int64) -> Int64? {
        guard let next = deadlines.first else { return nil }
        return max(0, next.deadline - now)
    }

    /// Publishes every held update whose window has closed (all of them when `now` is nil).
    func flushDue(now: Int64?) {
        var count = 0
        while let (deadline, message) = deadlines.first {
            if let now, deadline > now { break }
            _ = deadlines.popFirst()
            if let (status, key) = held.removeValue(forKey: message) {
                publish(status, key: key)
                count += 1
            }
        }
        onPublished(count)
    }

    private func publish(_ status: MessageStatus, key: UInt64) {
        let c = Int(key >> 32)
        if c >= conversations.count || conversations[c].id != status.conversation {
            relocate(status.conversation, to: c)
        }
        conversations[c].sequence += 1
        sink.publish(
            topic: conversations[c].topic,
            update: .status(
                StatusUpdate(publisherRun: publisherRun, sequence: conversations[c].sequence, status: status)
            )
        )
    }

    /// Puts conversation `id`'s stream at slot `c`: from the slot it had, from `parked`, or new;
    /// parks the stream that was there.
    private func relocate(_ id: String, to c: Int) {
        if c >= conversations.count {
            conversations.append(contentsOf: repeatElement(Stream(), count: c + 1 - conversations.count))
        }
        let displaced = conversations[c]
        if !displaced.id.isEmpty {
            slots[displaced.id] = nil
            parked[displaced.id] = displaced
        }
        if let slot = slots[id] {
            conversations[c] = conversations[slot]
            conversations[slot] = Stream()
        } else {
            conversations[c] =
                parked.removeValue(forKey: id)
                ?? Stream(id: id, topic: Array(Partitioning.exactTopic(for: id).utf8))
        }
        slots[id] = c
    }

    /// Numbers the next update of a user's topic: its sequence, and its topic frame (made once).
    /// One hash lookup per update: the entry is changed in place.
    private func nextUserUpdate(of user: String) -> Stream {
        if let index = users.index(forKey: user) {
            users.values[index].sequence += 1
            return users.values[index]
        }
        let entry = Stream(id: user, sequence: 1, topic: Array(Partitioning.exactUserTopic(for: user).utf8))
        users[user] = entry
        return entry
    }

    /// A topic's stream: whose it is (a conversation's or a user's id; empty for a free slot),
    /// the last sequence published on it and its topic frame.
    private struct Stream {
        var id = ""
        var sequence: UInt64 = 0
        var topic: [UInt8] = []
    }
}
