import Metrics
import ReceiptsWire

/// The daemon's counters: kept for the stats query under their dotted names and reported to
/// swift-metrics under their Prometheus names, both from their `CounterID`.
///
/// Each (name, label) counter is created once; hot paths resolve it to a `Handle` up front
/// and increment through that (an array index) instead of hashing the name per event.
/// Owned by the service loop's thread, so the values need no locking.
final class ServiceCounters {
    /// A registered counter.
    struct Handle {
        fileprivate let index: Int
    }

    private struct Key: Hashable, Comparable {
        var name: String
        var label: String
        static func < (lhs: Key, rhs: Key) -> Bool { (lhs.name, lhs.label) < (rhs.name, rhs.label) }
    }

    private struct Entry {
        let key: Key
        var value: UInt64
        let metric: Metrics.Counter
    }

    private var entries: [Entry] = []
    private var indexes: [Key: Int] = [:]

    /// The handle of counter `id` with the optional dimension `label`, registering it once.
    func handle(_ id: CounterID, label: String = "") -> Handle {
        let key = Key(name: id.name, label: label)
        if let index = indexes[key] { return Handle(index: index) }
        entries.append(
            Entry(key: key, value: 0, metric: Metrics.Counter(label: id.family.name, dimensions: id.dimensions(label)))
        )
        indexes[key] = entries.count - 1
        return Handle(index: entries.count - 1)
    }

    /// Adds `amount` to a registered counter.
    func increment(_ handle: Handle, by amount: Int = 1) {
        guard amount > 0 else { return }
        entries[handle.index].value &+= UInt64(amount)
        entries[handle.index].metric.increment(by: Int64(amount))
    }

    /// Adds `amount` to the counter `id` / `label` (for rare events; hot paths keep a handle).
    func increment(_ id: CounterID, label: String = "", by amount: Int = 1) {
        increment(handle(id, label: label), by: amount)
    }

    /// Every counter, sorted by name then label, for the stats query.
    func snapshot() -> [ReceiptsWire.Counter] {
        entries.sorted { $0.key < $1.key }.map { entry in
            ReceiptsWire.Counter(name: entry.key.name, label: entry.key.label, value: entry.value)
        }
    }
}
