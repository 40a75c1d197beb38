/// Which log lines of a repeating kind may be written now: at most one per kind per interval,
/// the rest counted so that the next line written can say how many were not.
///
/// A reconnecting crowd or a hostile peer repeats the same event many times a second: each one
/// is counted in the metrics, but a line per event would flood the log. Owned by one thread.
struct LogThrottle<Kind: Hashable> {
    /// The shortest time between two lines of one kind.
    let intervalMilliseconds: Int64
    /// Kinds remembered at most: past this the memory is cleared (a peer inventing kinds, e.g.
    /// keys, must not grow it without bound).
    let kindLimit: Int
    /// Per kind: when a line was last written (monotonic ms), and the events not logged since.
    private var kinds: [Kind: (loggedMonotonic: Int64, suppressed: Int)] = [:]

    init(intervalMilliseconds: Int64, kindLimit: Int = 10_000) {
        self.intervalMilliseconds = intervalMilliseconds
        self.kindLimit = kindLimit
    }

    /// Records one event of `kind`.
    /// - Returns: nil if it must not be logged now; else how many events of the kind were not
    ///   logged since the last line.
    mutating func admit(_ kind: Kind, now: Int64 = ServiceClock.monotonicMilliseconds()) -> Int? {
        if let last = kinds[kind], now - last.loggedMonotonic < intervalMilliseconds {
            kinds[kind]?.suppressed += 1
            return nil
        }
        if kinds[kind] == nil, kinds.count >= kindLimit { kinds.removeAll() }
        let suppressed = kinds[kind]?.suppressed ?? 0
        kinds[kind] = (now, 0)
        return suppressed
    }
}
