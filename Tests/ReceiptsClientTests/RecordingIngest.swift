import ReceiptLog
import ReceiptsCore
import ReceiptsWire

@testable import ReceiptsClient

/// An ``IngestEnvironment`` without sockets: it records the frames an `IngestScheduler`
/// transmits and the answers it gives, and plays the workers' reachability, a socket that
/// refuses frames and the outbox's durable position.
final class RecordingIngest: IngestEnvironment {
    /// A frame as transmitted.
    struct Frame: Equatable {
        var worker: Int
        /// The member of the worker's ordinal it went to.
        var member: Int
        var tag: UInt64
        var events: [Event]

        /// The events' sequences, to compare frames at a glance.
        var sequences: [UInt64] { events.map(\.id.sequence) }
    }

    /// Ordinals `reach` accepts.
    var reachable: Range<Int> = 0..<8
    /// Whether `transmit` refuses every frame (a socket that cannot queue now).
    var refusesFrames = false
    /// The outbox's durable position.
    var durable = LogPosition.zero
    /// Set to make `isDurable` throw (a failed outbox).
    var outboxFailure: ReceiptsClientError?
    private(set) var frames: [Frame] = []
    private(set) var answers: [UInt64: Result<[EventOutcome], ReceiptsClientError>] = [:]
    /// The event ids answered to the outbox, in order.
    private(set) var outboxAnswered: [EventID] = []

    func reach(_ worker: Int) -> Bool {
        reachable.contains(worker)
    }

    func transmit(tag: UInt64, body: [UInt8], to worker: Int, member: Int) -> Bool {
        guard !refusesFrames else { return false }
        // A frame the scheduler encoded always decodes.
        frames.append(Frame(worker: worker, member: member, tag: tag, events: try! EventBatchCodec.decode(body)))
        return true
    }

    func isDurable(_ position: LogPosition) throws(ReceiptsClientError) -> Bool {
        if let outboxFailure { throw outboxFailure }
        return position <= durable
    }

    func answer(_ request: UInt64, _ result: Result<[EventOutcome], ReceiptsClientError>, outboxIDs: [EventID]) {
        answers[request] = result
        outboxAnswered += outboxIDs
    }

    /// The frames transmitted since the last call.
    func takeFrames() -> [Frame] {
        defer { frames = [] }
        return frames
    }

    /// The outcomes a send was answered with; nil while it is not answered or if it failed.
    func outcomes(_ request: UInt64) -> [EventOutcome]? {
        try? answers[request]?.get()
    }

    /// The error a send failed with; nil while it is not answered or if it succeeded.
    func failure(_ request: UInt64) -> ReceiptsClientError? {
        guard case .failure(let error)? = answers[request] else { return nil }
        return error
    }
}
