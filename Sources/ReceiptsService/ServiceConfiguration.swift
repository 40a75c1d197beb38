public import ReceiptLog

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
    /// This worker's ordinal (a StatefulSet's pod index).
    public var workerIndex: Int
    /// How many workers share the conversations.
    public var workerCount: Int
    /// When a batch counts as durable.
    public var fsyncPolicy: FsyncPolicy
    /// Larger frames are refused with FRAME_TOO_LARGE.
    public var maxFrameBytes: Int
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

    /// The embedded default configuration, rooted at `dataDirectory`.
    public init(dataDirectory: String = "receiptd-data") {
        self.dataDirectory = dataDirectory
        ingestEndpoint = "ipc://\(dataDirectory)/ingest.sock"
        ingestSubscribeEndpoint = "ipc://\(dataDirectory)/ingest-sub.sock"
        publishEndpoint = "ipc://\(dataDirectory)/updates.sock"
        queryEndpoint = "ipc://\(dataDirectory)/query.sock"
        workerIndex = 0
        workerCount = 1
        fsyncPolicy = .always
        maxFrameBytes = 16 << 20
        coalesceMilliseconds = 0
        compactAfterBytes = 256 << 20
        compactIntervalSeconds = 600
        retentionSeconds = 0
        pendingReceiptLimit = 100_000
        pendingReceiptLifetimeMilliseconds = 60_000
        cutCorruptionAtStart = false
        publishHighWaterMark = 100_000
    }

    /// Checks the values that would otherwise fail later and less clearly.
    /// - Throws: `ServiceError` with code `.configuration` naming the bad setting.
    public func validate() throws(ServiceError) {
        guard workerCount >= 1 else { throw ServiceError(.configuration, "worker count must be at least 1, got \(workerCount)") }
        guard (0..<workerCount).contains(workerIndex) else {
            throw ServiceError(.configuration, "worker index \(workerIndex) is outside 0..<\(workerCount)")
        }
        guard maxFrameBytes > 0 else { throw ServiceError(.configuration, "max frame bytes must be positive") }
        guard coalesceMilliseconds >= 0 else { throw ServiceError(.configuration, "coalescing window must not be negative") }
        guard retentionSeconds >= 0 else { throw ServiceError(.configuration, "retention must not be negative") }
    }
}
