import ReceiptsCore

/// An engine driven in this process, for the bench rows that measure the engine alone: each
/// event from one source, a millisecond after the one before, with the read states it
/// published counted.
struct InProcessEngine {
    /// The engine.
    var engine = ReceiptEngine()
    /// Read states the events published since this was last set to 0.
    var readStates = 0
    private let source: String
    private var sequence: UInt64 = 0
    private var clock: Int64 = 1_750_000_000_000

    /// - Parameter source: The events' source.
    init(source: String) {
        self.source = source
    }

    /// Applies an event.
    mutating func apply(_ kind: EventKind) {
        sequence += 1
        clock += 1
        let event = Event(id: EventID(source: source, sequence: sequence), kind: kind)
        readStates += engine.apply(event, at: Timestamp(milliseconds: clock)).readStates.count
    }
}
