import Foundation
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsService
import ReceiptsTestKit
import ReceiptsWire

extension BenchRun {
    /// The log alone, in this process: append throughput per fsync policy beside the plain
    /// write + fdatasync loops, replay through the engine, and snapshot load.
    mutating func storage() throws {
        let batched = frames(1_000_000, smoke: 20_000, batchSize: 1000)
        let single = singleEventFrames()
        let time = Timestamp(milliseconds: 1_750_000_000_000)
        let batchedRecords = (batched.setup + batched.frames).map { Self.batchRecord(time: time, frame: $0.bytes) }
        let singleRecords = single.frames.map { Self.batchRecord(time: time, frame: $0.bytes) }
        let directory = try TemporaryDirectory.make(prefix: "rs")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let disk = try DiskBaseline.syncLoop(directory: directory, size: 1 << 20, seconds: smoke ? 0.3 : 2)
        let syncs = try DiskBaseline.syncLoop(directory: directory, size: 4096, seconds: smoke ? 0.3 : 2)
        let policies: [(String, FsyncPolicy)] = [
            ("always", .always), ("interval:10", .interval(milliseconds: 10)), ("none", .none),
        ]
        for (name, policy) in policies {
            let path = "\(directory)/\(name)"
            let big = try Self.append(batchedRecords, directory: path + "-batched", policy: policy)
            let bytes = batchedRecords.reduce(0) { $0 + $1.count }
            let events = batched.eventCount + batched.setupEventCount
            table.add(
                "log append, fsync \(name), \(bytes / batchedRecords.count / 1024) KiB records (1000-event batches)",
                ours: ResultTable.rate(Double(batchedRecords.count) / big, "records/s") + ", "
                    + String(format: "%.0f MB/s", Double(bytes) / big / 1e6) + ", "
                    + ResultTable.rate(Double(events) / big),
                baseline: String(format: "%.0f MB/s (1 MiB write+fdatasync)", disk.megabytesPerSecond),
                ratio: ResultTable.ratio(Double(bytes) / big / 1e6, disk.megabytesPerSecond)
            )
            let small = try Self.append(singleRecords, directory: path + "-single", policy: policy)
            let smallBytes = singleRecords.reduce(0) { $0 + $1.count }
            table.add(
                "log append, fsync \(name), \(smallBytes / singleRecords.count) B records (one event each)",
                ours: ResultTable.rate(Double(singleRecords.count) / small, "records/s") + ", "
                    + String(format: "%.1f MB/s", Double(smallBytes) / small / 1e6),
                baseline: ResultTable.rate(syncs.perSecond, "syncs/s") + " (4 KiB write+fdatasync)",
                ratio: ResultTable.ratio(Double(singleRecords.count) / small, syncs.perSecond)
            )
        }
        try replayAndSnapshot(directory: "\(directory)/always-batched", receipts: batched.receiptCount)
        table.note(
            "Storage rows run ReceiptLog in the harness process (no sockets): one thread appends the records as fast "
                + "as append returns, the clock stops when flush() says the last one is durable. Baselines are plain "
                + "pwrite + fdatasync loops on the same file system in the same invocation; group commit lets the log "
                + "beat the per-write sync rate by sharing one fdatasync among many records."
        )
    }

    /// The payload receiptd logs for an acknowledged batch frame applied at `time`.
    private static func batchRecord(time: Timestamp, frame: [UInt8]) -> [UInt8] {
        frame.withUnsafeBytes { LogRecord.acknowledgedBatch(time: time, frame: $0).payload() }
    }

    /// Appends every record and waits until the last is durable; returns the seconds taken.
    private static func append(_ records: [[UInt8]], directory: String, policy: FsyncPolicy) throws -> Double {
        let log = try Self.openLog(LogConfiguration(directory: directory, fsyncPolicy: policy))
        let start = Monotonic.now()
        for record in records {
            _ = try record.withUnsafeBytes {
                try log.append(type: LogRecord.Kind.acknowledgedBatch.rawValue, payload: $0)
            }
        }
        try log.flush()
        let seconds = Monotonic.seconds(from: start, to: Monotonic.now())
        try log.close()
        return seconds
    }

    /// Replays the batched log through the engine (as receiptd's recovery does: `replay`, no
    /// statuses), then encodes the state and loads it back.
    private mutating func replayAndSnapshot(directory: String, receipts: Int) throws {
        let log = try Self.openLog(LogConfiguration(directory: directory))
        defer { try? log.close() }
        var bytes = 0
        var records = 0
        let rawStart = Monotonic.now()
        try log.replay { _, payload, _ in
            bytes += payload.count
            records += 1
        }
        let rawSeconds = Monotonic.seconds(from: rawStart, to: Monotonic.now())
        var engine = ReceiptEngine()
        var applied = 0
        let start = Monotonic.now()
        try log.replay { type, payload, _ in
            let (time, events) = try Self.decodedBatch(type: type, payload: payload)
            for event in events { _ = engine.replay(event, at: time) }
            applied += events.count
        }
        let seconds = Monotonic.seconds(from: start, to: Monotonic.now())
        table.add(
            "log replay through decode + engine, in process (\(Self.count(applied)) events)",
            ours: ResultTable.rate(Double(applied) / seconds),
            baseline: ResultTable.rate(Double(records) / rawSeconds, "records/s")
                + String(format: ", %.0f MB/s (read + crc only)", Double(bytes) / rawSeconds / 1e6),
            target: ">= 1M events/s"
        )
        var pipelined = ReceiptEngine()
        var pipelinedApplied = 0
        let pipelinedStart = Monotonic.now()
        try log.replay { type, payload, _ in
            try Self.decodedBatch(type: type, payload: payload)
        } applying: { (time: Timestamp, events: [Event]) in
            for event in events { _ = pipelined.replay(event, at: time) }
            pipelinedApplied += events.count
        }
        let pipelinedSeconds = Monotonic.seconds(from: pipelinedStart, to: Monotonic.now())
        precondition(pipelinedApplied == applied && pipelined.counters == engine.counters)
        table.add(
            "log replay, decoding on a second thread, in process (\(Self.count(applied)) events)",
            ours: ResultTable.rate(Double(applied) / pipelinedSeconds),
            baseline: "one thread: " + ResultTable.rate(Double(applied) / seconds),
            target: ">= 1M events/s"
        )
        let encodeStart = Monotonic.now()
        let state = engine.encodedState()
        let encodeSeconds = Monotonic.seconds(from: encodeStart, to: Monotonic.now())
        let loadStart = Monotonic.now()
        let restored = try ReceiptEngine(restoringFrom: state, configuration: EngineConfiguration())
        let loadSeconds = Monotonic.seconds(from: loadStart, to: Monotonic.now())
        precondition(restored.counters.messages == engine.counters.messages)
        table.add(
            "snapshot load, in process (\(Self.count(engine.counters.messages)) messages, \(Self.count(receipts)) receipts, "
                + "\(ResultTable.bytes(Double(state.count))), \(state.count / max(engine.counters.messages, 1)) B/message)",
            ours: ResultTable.rate(Double(receipts) / loadSeconds, "receipts/s"),
            baseline: "encode: " + ResultTable.seconds(encodeSeconds),
            target: ">= 5M receipts/s"
        )
        let opened = try Self.openAndRestore(state, directory: directory + "-snapshots")
        precondition(opened.messages == engine.counters.messages)
        table.add(
            "snapshot load through the log, in process (2 generations; open, check, decode)",
            ours: ResultTable.rate(Double(receipts) / opened.seconds, "receipts/s"),
            baseline: "decode alone: " + ResultTable.seconds(loadSeconds),
            target: ">= 5M receipts/s"
        )
    }

    /// Opens a log for a storage row: nobody waits on its durability callbacks.
    private static func openLog(_ configuration: LogConfiguration) throws -> ReceiptLog {
        try ReceiptLog(configuration: configuration, logger: Logger(label: "bench"), onDurable: {}, onFatal: { _ in })
    }

    /// The time and events of a batch record; the storage rows' logs hold nothing else.
    private static func decodedBatch(type: UInt8, payload: UnsafeRawBufferPointer) throws -> (Timestamp, [Event]) {
        guard case .acknowledgedBatch(let time, let frame) = try LogRecord(type: type, payload: payload) else {
            throw LoadgenError(.protocolViolation, "the log holds a record other than a batch")
        }
        return (time, try EventBatchCodec.decode(frame))
    }

    /// Writes `state` as two snapshot generations (as after two compactions), then times what
    /// receiptd's recovery does with them: open the log (which checks the snapshots) and
    /// restore the engine from the newest.
    private static func openAndRestore(_ state: [UInt8], directory: String) throws -> (seconds: Double, messages: Int) {
        let configuration = LogConfiguration(directory: directory)
        let log = try Self.openLog(configuration)
        _ = try log.writeSnapshot(state, covering: .zero)
        let record = Self.batchRecord(time: Timestamp(milliseconds: 1), frame: [])
        let end = try record.withUnsafeBytes {
            try log.append(type: LogRecord.Kind.acknowledgedBatch.rawValue, payload: $0)
        }
        try log.flush()
        _ = try log.writeSnapshot(state, covering: end)
        try log.close()

        let start = Monotonic.now()
        let reopened = try Self.openLog(configuration)
        defer { try? reopened.close() }
        let restored = try reopened.withLatestSnapshot { _, payload in
            try ReceiptEngine(restoringFrom: payload, configuration: EngineConfiguration())
        }
        guard let engine = restored else {
            throw LoadgenError(.protocolViolation, "the log reopened without its snapshot")
        }
        return (Monotonic.seconds(from: start, to: Monotonic.now()), engine.counters.messages)
    }
}
