import Metrics
import ReceiptsWire

/// The daemon's counters: kept for the stats query and reported to swift-metrics.
///
/// Each (name, label) counter is created once and reused. Owned by the service loop's
/// thread, so the values need no locking.
final class ServiceCounters {
    private struct Key: Hashable, Comparable {
        var name: String
        var label: String
        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.name, lhs.label) < (rhs.name, rhs.label) }
    }

    private struct Entry {
        var value: UInt64
        let metric: Metrics.Counter
    }

    private var entries: [Key: Entry] = [:]

    /// Adds `amount` to the counter `name` with the optional dimension `label`.
    func increment(_ name: String, label: String = "", by amount: Int = 1) {
        guard amount > 0 else { return }
        let key = Key(name: name, label: label)
        if entries[key] == nil {
            let dimensions = label.isEmpty ? [] : [("kind", label)]
            entries[key] = Entry(value: 0, metric: Metrics.Counter(label: name, dimensions: dimensions))
        }
        entries[key]!.value &+= UInt64(amount)
        entries[key]!.metric.increment(by: Int64(amount))
    }

    /// The current value of a counter (0 if never incremented).
    func value(_ name: String, label: String = "") -> UInt64 {
        entries[Key(name: name, label: label)]?.value ?? 0
    }

    /// Every counter, sorted by name then label, for the stats query.
    func snapshot() -> [ReceiptsWire.Counter] {
        entries.keys.sorted().map { key in
            ReceiptsWire.Counter(name: key.name, label: key.label, value: entries[key]!.value)
        }
    }
}
