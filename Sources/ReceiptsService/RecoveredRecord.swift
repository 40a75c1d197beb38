import ReceiptLog
import ReceiptsCore

/// A log record as recovery's helper thread hands it over: a batch decoded, anything else as
/// its bytes (parsed again when applied; they are rare).
enum RecoveredRecord: Sendable {
    case batch(time: Timestamp, events: [Event])
    case other(type: UInt8, payload: [UInt8], end: LogPosition)
}
