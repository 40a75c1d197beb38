/// The replay windows of a worker that conversations were imported from, as they were when it
/// froze them.
///
/// A gateway may send again an event that the old owner applied (its acknowledgement was
/// lost) after the conversation moved; the new owner's own windows never saw that id. While
/// the client's retries can still arrive, an event for an imported conversation is a
/// duplicate if these windows say so too.
struct FrozenReplayWindows: Sendable {
    /// The worker the conversations came from.
    var sender: Int
    /// Its windows at the freeze of its latest export to this worker.
    var windows: ReplayWindowTable
    /// Server time of that import: the windows are dropped `lifetime` later.
    var frozenAt: Int64

    /// How long frozen windows are kept: the client's longest retry horizon (a day).
    static let lifetime: Int64 = 86_400_000

    /// Whether the old owner had applied this event.
    mutating func isDuplicate(_ id: EventID) -> Bool {
        let position = windows.find(id.source)
        return windows.isDuplicate(id.sequence, at: position)
    }
}
