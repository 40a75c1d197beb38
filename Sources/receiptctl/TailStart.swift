import ReceiptsCore
import ReceiptsWire

/// The conversation state `tail` starts from: updates it already covers are not printed.
///
/// A one-conversation subscription starts by reporting the conversation's current statuses
/// (from the subscription's own snapshot); those are not news to someone who saw the state
/// `tail` started from.
struct TailStart: Sendable {
    /// The owner's publisher run at the snapshot.
    let publisherRun: UInt64
    /// The last update sequence the snapshot covers.
    let sequence: UInt64
    /// Each message's status in the snapshot.
    let statuses: [String: MessageStatus]

    init(snapshot: ConversationSnapshot, publisherRun: UInt64, sequence: UInt64) {
        self.publisherRun = publisherRun
        self.sequence = sequence
        statuses = Dictionary(snapshot.messages.map { ($0.message, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Whether the update says nothing the start did not: at or before its position, or the
    /// very status it showed.
    func covers(_ update: StatusUpdate) -> Bool {
        if update.publisherRun == publisherRun, update.sequence <= sequence { return true }
        return statuses[update.status.message] == update.status
    }
}
