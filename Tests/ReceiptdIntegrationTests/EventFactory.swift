import Foundation
import ReceiptsCore

/// Builds events with a fixed source and increasing sequence numbers.
struct EventFactory {
    let source: String
    private(set) var sequence: UInt64 = 0

    init(source: String = "gw-\(UUID().uuidString.prefix(8))") {
        self.source = source
    }

    mutating func make(_ kind: EventKind, clientTime: Timestamp? = nil) -> Event {
        sequence += 1
        return Event(id: EventID(source: source, sequence: sequence), clientTime: clientTime, kind: kind)
    }
}
