import CReceiptsProto

/// One of a worker's counters, in a stats answer (`receipts.v1.Counter`).
public struct Counter: Hashable, Sendable {
    /// Dotted name, e.g. "receiptd.events.rejected".
    public var name: String
    /// A dimension, e.g. the reject reason; empty if none.
    public var label: String
    /// The value since the worker started.
    public var value: UInt64

    /// Creates a counter value.
    /// - Parameters:
    ///   - name: Dotted name.
    ///   - label: A dimension; empty if none.
    ///   - value: The value since start.
    public init(name: String, label: String = "", value: UInt64) {
        self.name = name
        self.label = label
        self.value = value
    }
}

extension Counter {
    init(wire counter: Receipts__V1__Counter) {
        self.init(name: String(wire: counter.name), label: String(wire: counter.label), value: counter.value)
    }

    func build(in arena: inout Arena) -> UnsafeMutablePointer<Receipts__V1__Counter> {
        let counter = arena.message(receipts__v1__counter__init)
        counter.pointee.name = arena.cString(name)
        counter.pointee.label = arena.cString(label)
        counter.pointee.value = value
        return counter
    }
}
