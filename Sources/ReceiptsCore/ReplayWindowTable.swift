/// The anti-replay windows of every event source, found by source id.
///
/// Every event needs its source's window twice (duplicate check, then record), and nearly
/// every event comes from the same source as the one before (one gateway connection sends a
/// batch), so the last source found is checked first, with one string comparison and no
/// hashing; a `[String: ReplayWindow]` hashed the id with SipHash twice per event.
struct ReplayWindowTable: Sendable {
    /// Source ids, in first-seen order.
    private(set) var sources: [String] = []
    /// Their windows, same positions.
    private(set) var windows: [ReplayWindow] = []
    /// Position by the hash of the source id.
    private var index = SlotTable()
    /// The position found last.
    private var last = 0

    init() {}

    /// How many sources have a window.
    var count: Int { sources.count }

    /// The position of a source's window, or nil if it has none yet.
    @inline(__always)
    mutating func find(_ source: String) -> Int? {
        if last < sources.count && sources[last] == source { return last }
        let found = sources.withUnsafeBufferPointer { sources in
            index.find(hash: ByteHash.hash(source)) { sources[$0] == source }
        }
        if let found { last = found }
        return found
    }

    /// What the window of the source at `position` (from `find`) knows of `sequence`; a
    /// source without a window (nil) has seen nothing.
    @inline(__always)
    func verdict(_ sequence: UInt64, at position: Int?) -> ReplayWindow.Verdict {
        position.map { windows[$0].verdict(sequence) } ?? .new
    }

    /// Whether the source's window saw `sequence`: within it and recorded (a sequence older
    /// than the window counts as not seen).
    mutating func hasSeen(_ sequence: UInt64, from source: String) -> Bool {
        verdict(sequence, at: find(source)) == .seen
    }

    /// Records an accepted sequence of a source (`position` from `find`, nil for a new source,
    /// which gets a window remembering `size` sequences).
    mutating func record(_ sequence: UInt64, at position: Int?, source: String, size: UInt64) {
        let position = position ?? add(source, ReplayWindow(size: size))
        windows[position].record(sequence)
    }

    /// Adds the window of a source that has none (restoring a snapshot); returns its position.
    @discardableResult
    mutating func add(_ source: String, _ window: ReplayWindow) -> Int {
        sources.append(source)
        windows.append(window)
        if index.needsRebuild(forCount: sources.count) {
            let sources = self.sources
            index.rebuild(count: sources.count) { ByteHash.hash(sources[$0]) }
        } else {
            index.insert(hash: ByteHash.hash(source), position: sources.count - 1)
        }
        last = sources.count - 1
        return last
    }
}
