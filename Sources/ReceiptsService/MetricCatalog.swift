import Foundation

/// Every metric receiptd reports through swift-metrics, under the names Prometheus users
/// expect (snake case, units as suffixes, `_total` on counters), with help text and buckets.
///
/// The service creates its metrics from these names; the executable's backend reads the
/// help text and buckets from here, so one file says what `/metrics` shows.
public enum MetricCatalog {
    /// One exported metric family.
    public struct Family: Sendable {
        /// The Prometheus name.
        public let name: String
        /// The `# HELP` text.
        public let help: String
        /// Bucket upper bounds of a duration histogram (a swift-metrics `Timer`).
        public let durationBuckets: [Duration]?
        /// Bucket upper bounds of a value histogram (an aggregating swift-metrics `Recorder`).
        public let valueBuckets: [Double]?

        init(_ name: String, _ help: String, durationBuckets: [Duration]? = nil, valueBuckets: [Double]? = nil) {
            self.name = name
            self.help = help
            self.durationBuckets = durationBuckets
            self.valueBuckets = valueBuckets
        }
    }

    static let events = Family(
        "receiptd_events_total",
        "Events by outcome (accepted, duplicate, rejected) and, for rejections, reason."
    )
    static let eventsHeld = Family(
        "receiptd_events_held_total",
        "Accepted receipts held because their message had not arrived yet."
    )
    static let frames = Family("receiptd_frames_total", "Frames received by endpoint (ingest, ingest_sub, query).")
    static let framesInvalid = Family(
        "receiptd_frames_invalid_total",
        "Frames refused whole, by error code (malformed_frame, frame_too_large, ...); gateway limits included."
    )
    static let limitRefusals = Family(
        "receiptd_limit_refusals_total",
        "Frames and queries refused whole for a gateway limit (frames_in_flight, events_per_batch, id_length)."
    )
    static let updatesPublished = Family("receiptd_updates_published_total", "Status updates published.")
    static let readStatesPublished = Family(
        "receiptd_read_state_updates_published_total",
        "Read-state updates numbered and handed to the publishing thread (one whose user's topic nobody follows is dropped there, unencoded)."
    )
    static let updatesDropped = Family(
        "receiptd_updates_dropped_total",
        "Status and read-state updates dropped because the publishing queue was full (--publish-queue-limit); "
            + "subscribers repair the sequence gap from a snapshot."
    )
    static let publishQueueDepth = Family(
        "receiptd_publish_queue_updates",
        "Updates waiting for the publishing thread to encode and send them (at most --publish-queue-limit)."
    )
    static let repliesDropped = Family(
        "receiptd_replies_dropped_total",
        "Replies not delivered, by reason (unroutable: the peer went away; shutdown: still held when the worker stopped)."
    )
    static let repliesHeld = Family(
        "receiptd_replies_held_total",
        "Replies that waited inside receiptd because the peer's ROUTER queue was full (sent once it took them)."
    )
    static let connectionsClosed = Family(
        "receiptd_connections_closed_total",
        "Connections closed, by endpoint: by the peer, or by libzmq for a message over the transport bound."
    )
    static let requestsDiscarded = Family(
        "receiptd_requests_discarded_total",
        "Requests discarded unread, by endpoint, from peers that read none of their held replies (nothing applied)."
    )
    static let replicationRole = Family(
        "receiptd_replication_role",
        "1 for this member's replication role (primary, standby, candidate, waiting), 0 for the others."
    )
    static let replicationTerm = Family("receiptd_replication_term", "The term this member serves or follows.")
    static let replicationLagBytes = Family(
        "receiptd_replication_lag_bytes",
        "On a primary, per standby: its appended end minus what the standby confirmed durable. On a standby: "
            + "the primary's appended end minus its own durable position."
    )
    static let replicationLagSeconds = Family(
        "receiptd_replication_lag_seconds",
        "On a primary, per standby: how long the standby has lacked records the primary holds durably (0 when "
            + "none), on the primary's monotonic clock."
    )
    static let replicationInSync = Family(
        "receiptd_replication_in_sync_standbys",
        "On a primary: the standbys its acknowledgements wait for (the in-sync set)."
    )
    static let replicationUnsynced = Family(
        "receiptd_replication_unsynced_seconds_total",
        "Time a primary acknowledged with no standby in sync (--replication-fallback local)."
    )
    static let replicationStalled = Family(
        "receiptd_replication_stalled_seconds_total",
        "Time a primary refused new ingest for lack of a standby in sync (--replication-fallback stall)."
    )
    static let replicationPromotions = Family(
        "receiptd_replication_promotions_total",
        "Times this member became primary, by reason (lease: the primary key was free; takeover: it deposed a silent primary)."
    )
    static let replicationDepositions = Family(
        "receiptd_replication_depositions_total",
        "Times this member stopped being primary other than by a stop, by reason (lease_expired, superseded)."
    )
    static let replicationTruncatedBytes = Family(
        "receiptd_replication_truncated_bytes_total",
        "Bytes of log a rejoining member cut back to the primary's history."
    )
    static let replicationRefusals = Family(
        "receiptd_replication_refused_frames_total",
        "Acknowledged ingest frames refused, nothing applied: UNAVAILABLE while no standby was in sync "
            + "(--replication-fallback stall), NOT_PRIMARY while the lease was not renewed."
    )
    static let queries = Family("receiptd_queries_total", "Queries answered, by kind.")
    static let compactions = Family("receiptd_compactions_total", "Compactions by result (ok, failed).")
    static let messagesExpired = Family("receiptd_messages_expired_total", "Messages removed by retention.")
    static let recoveryTruncatedBytes = Family(
        "receiptd_recovery_truncated_bytes_total",
        "Bytes of a torn log tail truncated at start-up."
    )
    static let recoveryDroppedRecords = Family(
        "receiptd_recovery_dropped_records_total",
        "Records dropped with a torn log tail at start-up."
    )
    static let fsyncErrors = Family(
        "receiptd_fsync_errors_total",
        "Log write or fdatasync failures; the worker stops at the first one."
    )
    static let pendingReceiptsDropped = Family(
        "receiptd_pending_receipts_dropped_total",
        "Held receipts dropped because their message did not arrive in time."
    )
    static let pendingReceiptsDiscarded = Family(
        "receiptd_pending_receipts_discarded_total",
        "Held receipts discarded when their message arrived: the user was not a recipient, or it is not a reply in the thread the receipt named."
    )
    /// Every acknowledged frame's latency (the load generator reads it too).
    package static let ackLatency = Family(
        "receiptd_ack_latency_seconds",
        "Time from receiving an acknowledged ingest frame to sending its acknowledgement.",
        durationBuckets: [
            .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .microseconds(2500),
            .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
            .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(5),
        ]
    )
    /// Where an acknowledged frame's time goes (the load generator reads it too).
    package static let ingestStages = Family(
        "receiptd_ingest_stage_seconds",
        "Time an acknowledged ingest frame spent in each stage, one frame in \(IngestStageTrace.sampleEvery): "
            + IngestStage.perFrame.map(\.rawValue).joined(separator: ", ")
            + "; and publish, per batch the publishing thread sends. commit_wait is the wait for the log's writer "
            + "thread; completion runs from durable to completed (the worker's wake-up, and under "
            + "--replication-ack standby the standbys).",
        durationBuckets: [
            .microseconds(10), .microseconds(25), .microseconds(50), .microseconds(100), .microseconds(250),
            .microseconds(500), .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
    )
    static let fsyncDuration = Family(
        "receiptd_fsync_duration_seconds",
        "Duration of each group commit's fdatasync.",
        durationBuckets: [
            .microseconds(50), .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1),
            .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        ]
    )
    static let eventsPerFrame = Family(
        "receiptd_events_per_frame",
        "Events in each decoded ingest frame.",
        valueBuckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000]
    )
    static let framesPerGroupCommit = Family(
        "receiptd_frames_per_group_commit",
        "Log records (ingest frames) written by each group commit.",
        valueBuckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096]
    )
    static let awaitingDurability = Family(
        "receiptd_awaiting_durability_batches",
        "Batches and replies waiting for the log to make them durable."
    )
    static let pendingReceipts = Family(
        "receiptd_pending_receipts",
        "Receipts held for messages that have not arrived."
    )
    static let snapshotDuration = Family(
        "receiptd_snapshot_duration_seconds",
        "Time to encode and write a compaction snapshot.",
        durationBuckets: [
            .milliseconds(10), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(30), .seconds(60),
        ]
    )
    static let snapshotBytes = Family("receiptd_snapshot_bytes", "Size of the last snapshot written.")
    static let recoveryDuration = Family(
        "receiptd_recovery_duration_seconds",
        "Time the worker took to open and replay its log at start-up."
    )
    static let stateConversations = Family("receiptd_state_conversations", "Conversations known to this worker.")
    static let stateMessages = Family("receiptd_state_messages", "Messages currently retained.")
    static let stateMembers = Family("receiptd_state_members", "Conversation member slots, current and former.")
    static let logBytes = Family("receiptd_log_bytes", "Bytes of log segments and snapshots on disk.")
    static let residentMemory = Family("receiptd_resident_memory_bytes", "Resident memory of the process.")
    static let handshakesRefused = Family(
        "receiptd_handshakes_refused_total",
        "CURVE handshakes refused, by endpoint and reason (unlisted_key: ZAP refused the client key; handshake_failed: a plaintext client or a wrong server key)."
    )
    static let moveSteps = Family(
        "receiptd_move_steps_total",
        "Steps of worker count changes taken here, by step (prepare, freeze, import, release, commit)."
    )
    static let moveRefusals = Family(
        "receiptd_move_refusals_total",
        "Steps of worker count changes refused here, by reason (stale_epoch, wrong_count, no_move, ...)."
    )
    static let requestsDenied = Family(
        "receiptd_requests_denied_total",
        "Queries refused because the client key's role may not make them, by kind."
    )
    static let keyReloads = Family(
        "receiptd_key_reloads_total",
        "Reloads of the CURVE allowlists (SIGHUP), by result (ok, failed)."
    )
    static let workerInfo = Family(
        "receiptd_worker_info",
        "Always 1; labels name this worker's index and the worker count."
    )

    /// Every family, by name.
    public static let families: [String: Family] = Dictionary(
        uniqueKeysWithValues: [
            events, eventsHeld, frames, framesInvalid, limitRefusals, updatesPublished, readStatesPublished,
            updatesDropped, publishQueueDepth, repliesDropped, repliesHeld,
            requestsDiscarded, connectionsClosed, replicationRole, replicationTerm, replicationLagBytes,
            replicationLagSeconds, replicationInSync, replicationUnsynced, replicationStalled, replicationPromotions,
            replicationDepositions, replicationTruncatedBytes, replicationRefusals, queries,
            compactions,
            messagesExpired, recoveryTruncatedBytes, recoveryDroppedRecords, fsyncErrors, pendingReceiptsDropped,
            pendingReceiptsDiscarded,
            ackLatency, ingestStages, fsyncDuration, eventsPerFrame, framesPerGroupCommit, awaitingDurability,
            pendingReceipts,
            snapshotDuration, snapshotBytes, recoveryDuration, stateConversations, stateMessages, stateMembers,
            logBytes, residentMemory, handshakesRefused, requestsDenied, keyReloads, workerInfo, moveSteps,
            moveRefusals,
        ].map { ($0.name, $0) }
    )
}
