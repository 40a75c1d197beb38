import Foundation
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsWire
import Synchronization

/// The gateway's durable queue: events are fsynced here before the client sends them, and
/// forgotten once a worker answered them, so a gateway restart loses nothing it took in.
///
/// It is a ``ReceiptLog`` of two record types, both `EventBatch` frames: the events taken in,
/// and the ids of events answered (events with no kind). Opening it replays both; what is left
/// is sent again. Compaction writes the unanswered events and the next sequence as a snapshot
/// once enough was appended since the last one.
final class Outbox: Sendable {
    static let eventsRecord: UInt8 = 1
    static let answeredRecord: UInt8 = 2

    private struct State {
        /// Events taken in and not yet answered.
        var pending: [EventID: Event] = [:]
        /// Above every sequence of `source` ever appended.
        var nextSequence: UInt64
        var lastSnapshot = LogPosition.zero
        var isCompacting = false
    }

    private let log: ReceiptLog
    /// Who waits for appended events to become durable.
    let durability: DurabilityWaiters
    private let state: Mutex<State>
    private let source: String
    private let logger: Logger
    /// Bytes appended since the last snapshot that start a compaction.
    private let compactionBytes: UInt64
    /// What opening found unanswered, oldest first: to send before anything new.
    let recovered: [Event]

    /// Opens (or creates) the outbox and replays it.
    /// - Parameters:
    ///   - directory: Where its segments and snapshots live.
    ///   - source: The client's event source, whose next sequence the outbox keeps.
    ///   - firstSequence: The lowest next sequence to report.
    ///   - compactionBytes: Bytes appended since the last snapshot that start a compaction.
    ///   - onDurabilityChange: Called on the log's thread after the durable position moved or
    ///     the log failed (the client's loop holds events until they are durable).
    /// - Throws: ``ReceiptsClientError`` `.transport` if the log cannot be opened or replayed.
    init(
        directory: String,
        source: String,
        firstSequence: UInt64,
        compactionBytes: UInt64 = 8 << 20,
        logger: Logger,
        onDurabilityChange: @escaping @Sendable () -> Void = {}
    ) throws(ReceiptsClientError) {
        let durability = DurabilityWaiters()
        do {
            log = try ReceiptLog(
                configuration: LogConfiguration(directory: directory, segmentSize: 16 << 20),
                logger: logger,
                onDurable: {
                    durability.wake()
                    onDurabilityChange()
                },
                onFatal: {
                    durability.fail($0)
                    onDurabilityChange()
                }
            )
        } catch {
            throw ReceiptsClientError(.transport, "cannot open the outbox in \(directory)", cause: error)
        }
        durability.attach(log)
        self.durability = durability
        self.source = source
        self.logger = logger
        self.compactionBytes = compactionBytes
        var state = State(nextSequence: firstSequence)
        do {
            if let snapshot = log.latestSnapshot {
                let (next, events) = try Self.decodeSnapshot(snapshot.payload)
                state.nextSequence = max(state.nextSequence, next)
                for event in events { state.pending[event.id] = event }
                state.lastSnapshot = snapshot.position
            }
            try log.replay { type, payload, _ in
                let events = try EventBatchCodec.decode(payload)
                switch type {
                case Self.eventsRecord:
                    for event in events {
                        state.pending[event.id] = event
                        if event.id.source == source {
                            state.nextSequence = max(state.nextSequence, event.id.sequence + 1)
                        }
                    }
                case Self.answeredRecord:
                    for event in events { state.pending[event.id] = nil }
                default:
                    throw ReceiptsClientError(.malformedReply, "outbox record of unknown type \(type)")
                }
            }
        } catch {
            try? log.close()
            throw ReceiptsClientError(.transport, "cannot replay the outbox in \(directory)", cause: error)
        }
        recovered = state.pending.values.sorted { ($0.id.source, $0.id.sequence) < ($1.id.source, $1.id.sequence) }
        self.state = Mutex(state)
    }

    deinit {
        try? log.close()
    }

    /// The sequence after every one the outbox has seen from its source.
    var nextSequence: UInt64 {
        state.withLock { $0.nextSequence }
    }

    /// How many events were taken in and not yet answered.
    var unanswered: Int {
        state.withLock { $0.pending.count }
    }

    /// Whether a compaction is running (tests wait for it).
    var isCompacting: Bool {
        state.withLock { $0.isCompacting }
    }

    /// Appends events without waiting for the disk.
    /// - Returns: Where their record ends: they are durable once ``durability`` says so.
    /// - Throws: ``ReceiptsClientError`` `.unavailable` if the log refused or failed.
    func append(_ events: [Event]) throws(ReceiptsClientError) -> LogPosition {
        try state.withLock { state throws(ReceiptsClientError) -> LogPosition in
            let position = try append(type: Self.eventsRecord, events)
            for event in events {
                state.pending[event.id] = event
                if event.id.source == source { state.nextSequence = max(state.nextSequence, event.id.sequence + 1) }
            }
            return position
        }
    }

    /// Forgets events a worker answered. The record need not be durable: after a crash the
    /// events are sent again and receiptd answers them as duplicates.
    func answered(_ ids: [EventID]) {
        let compaction = state.withLock { state -> (payload: [UInt8], position: LogPosition)? in
            for id in ids { state.pending[id] = nil }
            let record = ids.map { Event(id: $0, kind: .unknown) }
            guard (try? append(type: Self.answeredRecord, record)) != nil else { return nil }
            let position = log.appendedPosition
            guard !state.isCompacting, position.offset - state.lastSnapshot.offset >= compactionBytes else {
                return nil
            }
            state.isCompacting = true
            return (Self.encodeSnapshot(nextSequence: state.nextSequence, Array(state.pending.values)), position)
        }
        guard let compaction else { return }
        // Writing and syncing a snapshot takes milliseconds: not on the client's loop thread.
        Thread { [self] in
            nameCurrentThread("receipts-outbox")
            do {
                _ = try log.writeSnapshot(compaction.payload, covering: compaction.position)
                state.withLock { $0.lastSnapshot = compaction.position }
            } catch {
                logger.warning("outbox compaction failed", metadata: ["error": "\(error)"])
            }
            state.withLock { $0.isCompacting = false }
        }.start()
    }

    /// Syncs and closes the log.
    func close() {
        do {
            try log.close()
        } catch {
            logger.warning("outbox close failed", metadata: ["error": "\(error)"])
        }
    }

    private func append(type: UInt8, _ events: [Event]) throws(ReceiptsClientError) -> LogPosition {
        let appended = EventBatchCodec.encode(events).withUnsafeBytes { bytes in
            Result { () throws(LogError) in try log.append(type: type, payload: bytes) }
        }
        do {
            return try appended.get()
        } catch {
            throw ReceiptsClientError(.unavailable, "the outbox log refused a record", cause: error)
        }
    }

    /// The next sequence (8 bytes, little endian), then the unanswered events as an `EventBatch`.
    private static func encodeSnapshot(nextSequence: UInt64, _ events: [Event]) -> [UInt8] {
        withUnsafeBytes(of: nextSequence.littleEndian) { Array($0) } + EventBatchCodec.encode(events)
    }

    private static func decodeSnapshot(_ payload: [UInt8]) throws -> (UInt64, [Event]) {
        guard payload.count >= 8 else {
            throw ReceiptsClientError(.malformedReply, "outbox snapshot of \(payload.count) bytes")
        }
        let next = payload.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
        return (next, try EventBatchCodec.decode(Array(payload[8...])))
    }
}
