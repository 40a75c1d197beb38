import ReceiptsCore
import ReceiptsWire

/// The frame decoders of the two request endpoints.
enum WireTargets {
    /// Any frame either fails to decode (a `WireError`, never a crash) or decodes to events that
    /// encode and decode back to themselves, and that a fresh engine applies. An `.invalid` event
    /// holds a field value the wire cannot carry either: it comes back `.unknown`.
    static func eventBatch(_ input: [UInt8]) throws(InvariantViolation) {
        guard let events = try? EventBatchCodec.decode(input) else { return }
        let again = try? EventBatchCodec.decode(EventBatchCodec.encode(events))
        let expected = events.map { event in
            guard case .invalid = event.kind else { return event }
            return Event(id: event.id, clientTime: event.clientTime, kind: .unknown)
        }
        try require(again == expected, "events \(events) decoded back as \(String(describing: again))")
        var engine = ReceiptEngine()
        for (i, event) in events.enumerated() {
            let result = engine.apply(event, at: Timestamp(milliseconds: Int64(i)))
            for change in result.changes {
                try require(
                    engine.status(conversation: change.conversation, message: change.message) == change,
                    "a published change \(change) is not the message's status"
                )
            }
        }
    }

    /// Any frame either fails to decode or decodes to a query that encodes and decodes back to itself.
    static func query(_ input: [UInt8]) throws(InvariantViolation) {
        guard let query = try? Query.decode(input) else { return }
        let again = try? Query.decode(query.encode())
        try require(again == query, "query \(query) decoded back as \(String(describing: again))")
    }
}
