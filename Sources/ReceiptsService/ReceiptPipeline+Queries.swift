import ReceiptLog
import ReceiptsCore
import ReceiptsWire

extension ReceiptPipeline {
    /// The role a serving pipeline reports in `Health`: none unreplicated; `deposed` while its
    /// lease lapsed (it answers ingest `NOT_PRIMARY` then, and health must not say otherwise);
    /// else `primary`. (A standby answers from its own loop.)
    var servingRole: MemberRole? {
        guard configuration.replication != nil else { return nil }
        return frontier.ingestRefusal.primaryRole
    }

    /// Takes one query message (ROUTER: envelope, then one `Query` frame), borrowed for the
    /// duration of the call.
    /// - Parameter role: The client key's role, with CURVE on (the ZAP handler set it as the
    ///   connection's User-Id); nil without CURVE.
    func receiveQuery(_ frames: [UnsafeRawBufferPointer], role: ClientRole?) {
        counters.increment(hot.queryFrames)
        guard let (envelope, body) = RequestEnvelope.split(frames) else { return }
        guard let answer = answer(body: body, envelope: envelope, role: role) else { return }
        if case .health = answer {
            // Health shows no receipt state, only the worker's: answered at once, so that an
            // operator sees a primary that waits for a standby instead of waiting with it.
            send(envelope.reply(answer.encode()), on: .queries)
        } else {
            // The answer may reflect batches not yet durable: it waits for them.
            reply(envelope.reply(answer.encode()), on: .queries)
        }
    }

    /// The reply to one query, or nil when it will come later (compaction).
    /// - Parameter role: The client key's role, with CURVE on (else nil, and everything is allowed).
    private func answer(
        body: ArraySlice<UnsafeRawBufferPointer>,
        envelope: RequestEnvelope,
        role: ClientRole?
    ) -> QueryReply? {
        guard body.count == 1, let frame = body.first else {
            return refuse(
                FrameRefusal(
                    code: .wrongFrameCount,
                    message: "expected one Query frame after the envelope, got \(body.count)"
                )
            )
        }
        guard frame.count <= configuration.maxFrameBytes else {
            return refuse(
                FrameRefusal(
                    code: .frameTooLarge,
                    message: "query of \(frame.count) bytes exceeds the limit of \(configuration.maxFrameBytes)"
                )
            )
        }
        let query: Query
        do {
            query = try Query.decode(frame)
        } catch {
            return refuse(FrameRefusal(error, decoding: "Query"))
        }
        if let refusal = configuration.gatewayLimits.check(query) {
            return refuse(refusal)
        }
        if configuration.curve != nil, query.isForOperators, role != .operator {
            counters.increment(.authDenied, label: query.kindName)
            return .error(
                ErrorReply(code: .permissionDenied, message: "\(query.kindName) needs an operator key")
            )
        }
        counters.increment(.queriesServed, label: query.kindName)
        switch query {
        case .health:
            return .health(
                Health(
                    state: "serving",
                    workerIndex: configuration.workerIndex,
                    workerCount: engine.topology.workerCount,
                    uptimeMilliseconds: UInt64(ServiceClock.monotonicMilliseconds() - startedMonotonic),
                    publisherRun: statusPublisher.publisherRun,
                    role: servingRole,
                    term: terms.last.term,
                    member: configuration.replication?.member ?? "",
                    applied: log.appendedPosition.offset
                )
            )
        case .stats:
            return .stats(statistics())
        case .compact:
            compaction.requesters.append(envelope)
            startCompaction(reason: "requested", now: ServiceClock.monotonicMilliseconds())
            return nil
        case .topology, .prepareMove, .exportConversations, .importConversations, .releaseConversations,
            .commitMove:
            return answerMove(query)
        case .demote(let to):
            return demote(to: to, envelope: envelope)
        case .messageStatus, .readDetail, .lastSent, .unreadCounts, .snapshot:
            return QueryHandler(engine: engine).answer(
                query,
                publisherRun: statusPublisher.publisherRun,
                publishedSequence: statusPublisher.sequence(of:),
                userTopicRun: statusPublisher.userRun,
                publishedUserSequence: statusPublisher.sequence(ofUser:)
            )
        }
    }

    /// Counts a refused query and answers it.
    private func refuse(_ refusal: FrameRefusal) -> QueryReply {
        countInvalidFrame(refusal)
        return .error(refusal.errorReply)
    }

    private func statistics() -> [ReceiptsWire.Counter] {
        let engineCounters = engine.counters
        return counters.snapshot() + [
            ReceiptsWire.Counter(name: "receiptd.pending.held", value: UInt64(engineCounters.heldReceipts)),
            ReceiptsWire.Counter(
                name: "receiptd.pending.dropped",
                value: UInt64(engineCounters.droppedPendingReceipts)
            ),
            ReceiptsWire.Counter(
                name: "receiptd.pending.discarded",
                value: UInt64(engineCounters.discardedHeldReceipts)
            ),
            ReceiptsWire.Counter(name: "receiptd.state.conversations", value: UInt64(engineCounters.conversations)),
            ReceiptsWire.Counter(name: "receiptd.state.messages", value: UInt64(engineCounters.messages)),
            ReceiptsWire.Counter(name: "receiptd.log.bytes_since_snapshot", value: log.bytesSinceSnapshot),
            ReceiptsWire.Counter(name: "receiptd.log.durable_position", value: log.durablePosition.offset),
            ReceiptsWire.Counter(name: "receiptd.awaiting_durability", value: UInt64(awaiting.count)),
        ]
    }
}
