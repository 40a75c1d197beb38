import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsReplication
import ReceiptsWire

extension ReceiptPipeline {
    /// Takes one ingest message: from the acknowledged endpoint (ROUTER: envelope, then one
    /// `EventBatch` frame) or the fire-and-forget one (SUB: an optional topic, then the batch).
    /// The frames are borrowed for the duration of the call.
    func receiveIngest(_ frames: [UnsafeRawBufferPointer], acknowledged: Bool) {
        if acknowledged {
            handleAcknowledgedIngest(frames)
        } else {
            handleUnacknowledgedIngest(frames)
        }
    }

    private func handleAcknowledgedIngest(_ frames: [UnsafeRawBufferPointer]) {
        let received = ServiceClock.monotonicNanoseconds()
        counters.increment(hot.ingestFrames)
        guard let (envelope, body) = RequestEnvelope.split(frames) else { return }
        let waiting = awaiting.framesInFlight(of: envelope.peer)
        if let refusal = configuration.gatewayLimits.check(framesInFlight: waiting) {
            // Answered at once, ahead of the connection's earlier replies: queued behind them,
            // refusals would let one connection fill `awaiting` after all.
            countInvalidFrame(refusal)
            send(envelope.reply(IngestReply(results: [], error: refusal.errorReply).encode()), on: .ingest)
            return
        }
        if let refusal = Self.replicationRefusal(frontier.ingestRefusal) {
            // Not an invalid frame: counted on its own, never logged per frame (the shipping
            // thread logs the change once). Answered at once, as REPLICATION.md 5.3 promises:
            // nothing of it was applied, and queued behind a frame that waits for a standby to
            // return it would wait as long (on every connection), ahead of the connection's
            // earlier replies as a gateway limit's refusal is.
            counters.increment(.replicationRefusals)
            send(envelope.reply(IngestReply(results: [], error: refusal).encode()), on: .ingest)
            return
        }
        guard body.count == 1, let frame = body.first else {
            refuse(
                envelope: envelope,
                FrameRefusal(
                    code: .wrongFrameCount,
                    message: "expected one EventBatch frame after the envelope, got \(body.count)"
                )
            )
            return
        }
        acknowledgedFrames &+= 1
        var trace =
            acknowledgedFrames % IngestStageTrace.sampleEvery == 0 ? IngestStageTrace(received: received) : nil
        switch ingestFrame(frame, acknowledged: true, trace: &trace) {
        case .success(let (position, results, changes)):
            let reply = envelope.reply(IngestReply(results: results).encode())
            awaiting.append(
                AwaitingDurability(
                    position: position,
                    changes: changes,
                    reply: PendingReply(endpoint: .ingest, frames: reply),
                    receivedNanoseconds: received,
                    // A frame that appended nothing (only duplicates) has no log stages.
                    trace: trace?.appended == 0 ? nil : trace
                )
            )
        case .failure(let refusal):
            refuse(envelope: envelope, refusal)
        }
    }

    private func handleUnacknowledgedIngest(_ frames: [UnsafeRawBufferPointer]) {
        counters.increment(hot.subscribeFrames)
        // A gateway's PUB may put a topic frame first; the batch is the last frame.
        guard (1...2).contains(frames.count), let frame = frames.last else {
            countInvalidFrame(
                FrameRefusal(
                    code: .wrongFrameCount,
                    message: "fire-and-forget ingest expects 1 or 2 frames, got \(frames.count)"
                )
            )
            return
        }
        var untraced: IngestStageTrace?
        switch ingestFrame(frame, acknowledged: false, trace: &untraced) {
        case .success(let (position, _, changes)):
            awaiting.append(AwaitingDurability(position: position, changes: changes, reply: nil))
        case .failure(let refusal):
            countInvalidFrame(refusal)
        }
    }

    /// Decodes, applies and logs one batch frame, from the acknowledged ingest endpoint or not.
    /// - Parameter trace: A sampled frame's stages: when it was applied, and appended.
    /// - Returns: the log position the outcome waits for, the per-event outcomes, what to publish.
    private func ingestFrame(
        _ frame: UnsafeRawBufferPointer,
        acknowledged: Bool,
        trace: inout IngestStageTrace?
    ) -> Result<(LogPosition, [EventOutcome], Publication), FrameRefusal> {
        guard frame.count <= configuration.maxFrameBytes else {
            return .failure(
                FrameRefusal(
                    code: .frameTooLarge,
                    message: "frame of \(frame.count) bytes exceeds the limit of \(configuration.maxFrameBytes)"
                )
            )
        }
        let events: [Event]
        do {
            events = try EventBatchCodec.decode(frame, maxIDBytes: configuration.maxIDBytes)
        } catch {
            // MALFORMED_FRAME when protobuf-c cannot parse it; INVALID_ARGUMENT naming the event
            // and the field when an id is not UTF-8, as for an id over the length limit.
            return .failure(FrameRefusal(error, decoding: "EventBatch"))
        }
        if let refusal = configuration.gatewayLimits.check(batchOf: events.count) {
            return .failure(refusal)
        }
        metrics.eventsPerFrame.record(events.count)
        let now = clock.now()
        var outcomes: [EventOutcome] = []
        outcomes.reserveCapacity(events.count)
        var tally = OutcomeTally()
        var merger = ChangeMerger(events: events.count)
        // Read states are built only while they are published and some subscriber follows a user topic.
        engine.reportsReadStates = configuration.publishesReadStates && statusPublisher.numbersReadStates()
        for event in events {
            let result = engine.apply(event, at: now)
            outcomes.append(result.outcome)
            tally.add(result.outcome, logger: logger)
            merger.add(result)
        }
        let changes = merger.changes
        tally.report(to: counters, hot)
        trace?.applied = ServiceClock.monotonicNanoseconds()
        // Only accepted events change state; anything else waits for what is already in flight,
        // so that a duplicate is never acknowledged before its original is durable.
        guard tally.accepted > 0 else { return .success((log.appendedPosition, outcomes, changes)) }
        let record: LogRecord =
            acknowledged ? .acknowledgedBatch(time: now, frame: frame) : .unacknowledgedBatch(time: now, frame: frame)
        switch append(record) {
        case .success(let position):
            trace?.appended = ServiceClock.monotonicNanoseconds()
            return .success((position, outcomes, changes))
        case .failure(let error):
            return .failure(FrameRefusal(code: .unavailable, message: "the log refused the batch: \(error)"))
        }
    }

    /// Appends a record; a failure is fatal (the loop stops before acknowledging anything more).
    func append(_ record: LogRecord) -> Result<LogPosition, LogError> {
        let appended = record.payload().withUnsafeBytes { bytes in
            Result { () throws(LogError) in try log.append(type: record.kind.rawValue, payload: bytes) }
        }
        if case .failure(let error) = appended {
            signals.reportFatal(error)
        }
        return appended
    }

    /// Counts a refused frame under its code and, if it hit a gateway limit, under that limit
    /// too (so `receiptd.frames.invalid` keeps counting every refusal), and logs it.
    /// The answer to an ingest frame refused for replication's sake, nothing of it applied.
    private static func replicationRefusal(_ refusal: ReplicationGate.Refusal) -> ErrorReply? {
        switch refusal {
        case .none:
            nil
        case .noStandbyInSync:
            ErrorReply(code: .unavailable, message: "no standby in sync; nothing of the frame was applied")
        case .leaseExpired:
            ErrorReply(
                code: .notPrimary,
                message: "this member's lease was not renewed in time; nothing of the frame was applied"
            )
        case .handingOver:
            ErrorReply(
                code: .unavailable,
                message: "handing the ordinal over to a standby; nothing of the frame was applied"
            )
        }
    }

    func countInvalidFrame(_ refusal: FrameRefusal) {
        counters.increment(.framesInvalid, label: "\(refusal.code)")
        var metadata: Logger.Metadata = ["frame.error": "\(refusal.code)", "frame.detail": "\(refusal.message)"]
        if let limit = refusal.limit {
            counters.increment(.limitsRefused, label: "\(limit)")
            metadata["frame.limit"] = "\(limit)"
        }
        logger.warning("invalid frame", metadata: metadata)
    }

    /// Answers a bad ingest frame: nothing of it was applied, so only earlier batches must be durable first.
    private func refuse(envelope: RequestEnvelope, _ refusal: FrameRefusal) {
        countInvalidFrame(refusal)
        reply(envelope.reply(IngestReply(results: [], error: refusal.errorReply).encode()), on: .ingest)
    }
}
