import ReceiptsCore
import ReceiptsWire

/// The conversation state `tail` starts from: updates it already covers are not printed.
///
/// A one-conversation subscription starts by reporting the conversation's current statuses
/// (from the subscription's own snapshot); those are not news to someone who saw the state
/// `tail` started from.
struct TailStart: Sendable {
    /// The owner's epoch at the snapshot.
    let epoch: UInt64
    /// The last update sequence the snapshot covers.
    let sequence: UInt64
    /// Each message's status in the snapshot.
    let statuses: [String: MessageStatus]

    init(snapshot: ConversationSnapshot, epoch: UInt64, sequence: UInt64) {
        self.epoch = epoch
        self.sequence = sequence
        statuses = Dictionary(snapshot.messages.map { ($0.message, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Whether the update says nothing the start did not: at or before its position, or the
    /// very status it showed.
    func covers(_ update: StatusUpdate) -> Bool {
        if update.epoch == epoch, update.sequence <= sequence { return true }
        return statuses[update.status.message] == update.status
    }
}
