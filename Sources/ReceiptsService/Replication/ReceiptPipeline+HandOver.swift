import ReceiptsWire

extension ReceiptPipeline {
    /// Answers a `demote` query: starts (or joins) the hand-over to `to`; the answer comes when
    /// it ends (`advanceHandOver`).
    ///
    /// - Returns: The refusal, when no hand-over can start; nil when the answer comes later.
    func demote(to: String, envelope: RequestEnvelope) -> QueryReply? {
        guard let handOver else {
            return .error(
                ErrorReply(
                    code: .invalidArgument,
                    message: "demote: this worker is not an elected primary of a replicated ordinal"
                )
            )
        }
        return handOver.begin(to: to, requester: envelope, now: ServiceClock.monotonicMilliseconds()).map(
            QueryReply.error
        )
    }

    /// Takes the running hand-over one step: commits it once everything appended is
    /// acknowledged, or gives it up at its deadline, and answers the demote queries that
    /// waited for it. The answer goes out at once: it reflects no state of the engine.
    ///
    /// - Returns: Whether the ordinal was handed over (the loop must end).
    func advanceHandOver(now: Int64) -> Bool {
        guard
            let outcome = handOver?.advance(
                appended: log.appendedPosition.offset,
                acknowledged: frontier.position.offset,
                now: now
            )
        else { return false }
        switch outcome {
        case .handedOver(let result, let requesters):
            for requester in requesters { send(requester.reply(QueryReply.handOver(result).encode()), on: .queries) }
            return true
        case .failed(let error, let requesters):
            for requester in requesters { send(requester.reply(QueryReply.error(error).encode()), on: .queries) }
            return false
        }
    }

    /// For a stop: whether the loop must keep running to hand the ordinal over first (an
    /// elected primary with an in-sync standby, once); false to stop now.
    func handsOverBeforeStop(now: Int64) -> Bool {
        handOver?.holdsStop(now: now) ?? false
    }
}
