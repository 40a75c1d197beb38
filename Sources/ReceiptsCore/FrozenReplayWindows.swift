/// The replay windows of a worker that conversations were imported from, as they were when it
/// froze them.
///
/// A gateway may send again an event that the old owner applied (its acknowledgement was
/// lost) after the conversation moved; the new owner's own windows never saw that id. While
/// the client's retries can still arrive, an event for an imported conversation is a
/// duplicate if these windows recorded it too.
///
/// Only recorded ids count, never "older than the window": an event that the old owner never
/// saw (sent to the new owner, answered `moving` while the conversation was on its way) may
/// be far below the old owner's newest sequence of the same source, and must be applied. An
/// event the old owner applied but whose acknowledgement was lost stays inside its window:
/// the client keeps every unacknowledged event of a worker within half a window of its
/// newest, so the window cannot pass it before the freeze.
struct FrozenReplayWindows: Sendable {
    /// The worker the conversations came from.
    var sender: Int
    /// Its windows at the freeze of its latest export to this worker (they cover every
    /// earlier one's unacknowledged events, which the client keeps near the newest).
    var windows: ReplayWindowTable

    /// Whether the old owner had applied this event.
    mutating func isDuplicate(_ id: EventID) -> Bool {
        windows.hasSeen(id.sequence, from: id.source)
    }
}
