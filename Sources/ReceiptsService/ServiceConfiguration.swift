public import ReceiptLog
import ReceiptsCore
public import ReceiptsReplication
import ReceiptsWire

/// Everything the daemon needs to run; every field has a working default.
public struct ServiceConfiguration: Sendable {
    /// Where the log, snapshots and default `ipc://` endpoints live.
    public var dataDirectory: String
    /// Acknowledged ingest (ROUTER for REQ and DEALER gateways).
    public var ingestEndpoint: String
    /// Fire-and-forget ingest (SUB that gateways' PUB sockets connect to).
    public var ingestSubscribeEndpoint: String
    /// Status updates (PUB).
    public var publishEndpoint: String
    /// Queries (ROUTER for REQ clients).
    public var queryEndpoint: String
    /// This worker's ordinal (a StatefulSet's pod index). It may be at or past `workerCount`:
    /// a worker a scale-up added owns nothing until a move gives it conversations.
    public var workerIndex: Int
    /// How many workers share the conversations, for a new log; a log that recorded a worker
    /// count change keeps its own (deploy/SCALING.md).
    public var workerCount: Int
    /// When a batch counts as durable.
    public var fsyncPolicy: FsyncPolicy
    /// Larger frames are refused with FRAME_TOO_LARGE.
    public var maxFrameBytes: Int

    /// The transport bound on any one message read (libzmq's `ZMQ_MAXMSGSIZE`): twice
    /// `maxFrameBytes` plus 4 KiB. A larger message is not read at all (memory stays bounded
    /// whatever size a peer announces) and libzmq closes its connection, with no reply.
    public var transportMaxMessageBytes: Int64 { Int64(maxFrameBytes) * 2 + 4096 }
    /// Acknowledged frames one ingest connection may have waiting for durability; more are
    /// refused with UNAVAILABLE at once (the gateway re-sends them later).
    public var maxFramesInFlight: Int
    /// Batches with more events are refused whole with FRAME_TOO_LARGE.
    public var maxBatchEvents: Int
    /// Frames and queries with a longer id (UTF-8 bytes) are refused whole with INVALID_ARGUMENT.
    public var maxIDBytes: Int
    /// Updates to one message within this window are published once (0 = publish every update).
    public var coalesceMilliseconds: Int
    /// Compact when this many bytes were logged since the last snapshot.
    public var compactAfterBytes: UInt64
    /// Compact at least this often while there is new data (0 = only by size or request).
    public var compactIntervalSeconds: Int
    /// Messages older than this leave the state at compaction (0 = keep forever).
    public var retentionSeconds: Int64
    /// Receipts held for messages that have not arrived yet, at most.
    public var pendingReceiptLimit: Int
    /// How long a held receipt waits for its message before it is dropped and counted.
    public var pendingReceiptLifetimeMilliseconds: Int64
    /// Start even if the log is corrupt in the middle, cutting it there (operator's explicit choice).
    public var cutCorruptionAtStart: Bool
    /// Send high-water mark of the PUB socket, in messages.
    public var publishHighWaterMark: Int32
    /// Updates waiting for the publishing thread, at most. Past it an update is dropped and
    /// counted: its sequence was assigned already, so the next update of its conversation (or
    /// user) shows subscribers a gap, which they repair from a snapshot (the Clone pattern),
    /// as after the PUB socket's own drops at its high-water mark. Bounds the memory a slow
    /// publishing thread can hold.
    public var publishQueueLimit: Int
    /// Publish users' own read states on their topics (`ReadStateUpdate`); off, nothing is
    /// published there and the engine does not build them.
    public var publishesReadStates: Bool
    /// Replay the log with engine settings (worker, pending receipts) other than it was written with.
    public var acceptSettingsChange: Bool
    /// CurveZMQ with a ZAP allowlist on every endpoint; nil serves plaintext.
    public var curve: CurveSettings?
    /// This member's part in a replicated ordinal (deploy/REPLICATION.md); nil for a worker
    /// without replication.
    public var replication: ReplicationSettings?
    /// Starts the worker's helper threads (publishing, compaction, replay); tests substitute
    /// ``ThreadStarter/failing(_:)`` to see how a start that fails is reported.
    var threadStarter: ThreadStarter
    /// Where the engine's time comes from; tests substitute a clock they move by hand.
    var wallClock = WallClock.system

    /// The data directory used when neither a flag nor `RECEIPTD_DATA_DIR` names one.
    public static let defaultDataDirectory = WorkerEndpoints.defaultDataDirectory

    /// The embedded default configuration, rooted at `dataDirectory`.
    public init(dataDirectory: String = defaultDataDirectory) {
        self.init(dataDirectory: dataDirectory, endpoints: WorkerEndpoints(dataDirectory: dataDirectory))
    }

    /// The embedded default configuration with the given data directory and endpoints.
    private init(dataDirectory: String, endpoints: WorkerEndpoints) {
        self.dataDirectory = dataDirectory
        ingestEndpoint = endpoints.ingest
        ingestSubscribeEndpoint = endpoints.ingestSubscribe
        publishEndpoint = endpoints.publish
        queryEndpoint = endpoints.query
        workerIndex = 0
        workerCount = 1
        fsyncPolicy = .always
        maxFrameBytes = 16 << 20
        // Far above what gateways need (ReceiptsClient: 8 frames in flight, 1000 events per
        // frame; the load generator: at most 256 and 1000), far below what would let one
        // connection fill the worker's queue or stall it on one frame.
        maxFramesInFlight = 1024
        maxBatchEvents = 10_000
        maxIDBytes = 256
        coalesceMilliseconds = 0
        compactAfterBytes = 256 << 20
        compactIntervalSeconds = 600
        retentionSeconds = 0
        pendingReceiptLimit = 100_000
        pendingReceiptLifetimeMilliseconds = 60_000
        cutCorruptionAtStart = false
        publishHighWaterMark = 100_000
        publishQueueLimit = 100_000
        publishesReadStates = true
        acceptSettingsChange = false
        curve = nil
        threadStarter = .standard
    }

    /// The default configuration with the data directory and endpoints resolved as receiptd
    /// resolves them: each flag if given, else its `RECEIPTD_*` environment variable, else the
    /// default `ipc://` endpoint under the data directory. receiptctl resolves them the same
    /// way, so the two find each other with no flags at all.
    public init(
        dataDirectory: String?,
        ingest: String?,
        ingestSubscribe: String?,
        publish: String?,
        query: String?,
        environment: [String: String]
    ) {
        let dataDirectory = WorkerEndpoints.resolvedDataDirectory(dataDirectory, environment: environment)
        self.init(
            dataDirectory: dataDirectory,
            endpoints: WorkerEndpoints(
                dataDirectory: dataDirectory,
                ingest: ingest,
                ingestSubscribe: ingestSubscribe,
                publish: publish,
                query: query,
                environment: environment
            )
        )
    }

    /// Checks the values that would otherwise fail later and less clearly.
    /// - Throws: `ServiceError` with code `.configuration` naming the bad setting.
    public func validate() throws(ServiceError) {
        func check(_ condition: Bool, _ message: @autoclosure () -> String) throws(ServiceError) {
            if !condition { throw ServiceError(.configuration, message()) }
        }
        try check(
            (1..<Partitioning.workerLimit).contains(workerCount),
            "worker count must be in 1..<\(Partitioning.workerLimit), got \(workerCount)"
        )
        try check(
            (0..<Partitioning.workerLimit).contains(workerIndex),
            "worker index \(workerIndex) is outside 0..<\(Partitioning.workerLimit)"
        )
        // A log record holds one frame plus 8 bytes of time; the log takes records up to 256 MiB.
        try check(
            (1...(64 << 20)).contains(maxFrameBytes),
            "max frame bytes must be in 1...67108864, got \(maxFrameBytes)"
        )
        try check(
            (1...ReceiptPipeline.maxAwaiting).contains(maxFramesInFlight),
            "max frames in flight must be in 1...\(ReceiptPipeline.maxAwaiting), got \(maxFramesInFlight)"
        )
        try check(
            (1...1_000_000).contains(maxBatchEvents),
            "max batch events must be in 1...1000000, got \(maxBatchEvents)"
        )
        try check((1...65_536).contains(maxIDBytes), "max id bytes must be in 1...65536, got \(maxIDBytes)")
        try check(
            (0...60_000).contains(coalesceMilliseconds),
            "coalescing window must be in 0...60000 ms, got \(coalesceMilliseconds)"
        )
        try check(compactAfterBytes >= 4096, "compact-after bytes must be at least 4096, got \(compactAfterBytes)")
        try check(
            (0...31_536_000).contains(compactIntervalSeconds),
            "compaction interval must be in 0...31536000 s, got \(compactIntervalSeconds)"
        )
        try check(
            (0...3_153_600_000).contains(retentionSeconds),
            "retention must be in 0...3153600000 s (100 years), got \(retentionSeconds)"
        )
        try check(pendingReceiptLimit >= 0, "pending receipt limit must not be negative")
        try check(
            (0...86_400_000).contains(pendingReceiptLifetimeMilliseconds),
            "pending receipt lifetime must be in 0...86400000 ms, got \(pendingReceiptLifetimeMilliseconds)"
        )
        try check(publishHighWaterMark >= 0, "publish high-water mark must not be negative")
        try check(publishQueueLimit >= 1, "publish queue limit must be at least 1, got \(publishQueueLimit)")
        if let replication {
            try check(
                TermHistory.isValid(member: replication.member),
                "the replication member name must be 1 to \(TermHistory.maxMemberBytes) bytes without spaces, "
                    + "got \"\(replication.member)\""
            )
            try check(replication.windowBytes > 0, "the replication window must be positive")
            try check(
                replication.heartbeatMilliseconds > 0
                    && replication.timeoutMilliseconds > replication.heartbeatMilliseconds,
                "the replication timeout must be longer than the heartbeat interval"
            )
        }
    }
}
