import ReceiptLog
import Synchronization

/// Callers waiting for the outbox log to make their records durable, woken from the log's
/// writer thread.
final class DurabilityWaiters: Sendable {
    private struct State {
        var log: ReceiptLog?
        var failure: LogError?
        var waiting: [(position: LogPosition, reply: Reply<Void>)] = []
    }

    private let state = Mutex(State())

    /// Gives the waiters the log whose durable position they follow (it exists only after its
    /// callbacks, which call into this object, were made).
    func attach(_ log: ReceiptLog) {
        state.withLock { $0.log = log }
        wake()
    }

    /// Answers every waiter the durable position now covers. Called on the log's writer thread.
    func wake() {
        let ready = state.withLock { state -> [Reply<Void>] in
            guard let durable = state.log?.durablePosition else { return [] }
            let ready = state.waiting.filter { $0.position <= durable }.map(\.reply)
            state.waiting.removeAll { $0.position <= durable }
            return ready
        }
        for reply in ready { reply.resume(returning: .success(())) }
    }

    /// Fails every waiter, now and later: the log stopped on an error.
    func fail(_ error: LogError) {
        let waiting = state.withLock { state in
            state.failure = error
            defer { state.waiting = [] }
            return state.waiting
        }
        for waiter in waiting { waiter.reply.resume(returning: .failure(Self.error(error))) }
    }

    /// Returns once everything up to `position` is durable.
    /// - Throws: ``ReceiptsClientError`` `.unavailable` if the log failed.
    func wait(for position: LogPosition) async throws(ReceiptsClientError) {
        let result = await withCheckedContinuation { (reply: Reply<Void>) in
            let answer = state.withLock { state -> Result<Void, ReceiptsClientError>? in
                let answer = Self.answer(for: position, state)
                if answer == nil { state.waiting.append((position, reply)) }
                return answer
            }
            if let answer { reply.resume(returning: answer) }
        }
        try result.get()
    }

    /// Whether everything up to `position` is durable, for a caller that is woken otherwise.
    /// - Throws: ``ReceiptsClientError`` `.unavailable` if the log failed (it never will be).
    func isDurable(_ position: LogPosition) throws(ReceiptsClientError) -> Bool {
        guard let answer = state.withLock({ Self.answer(for: position, $0) }) else { return false }
        try answer.get()
        return true
    }

    /// Success once `position` is durable, failure once the log failed, else nil.
    private static func answer(for position: LogPosition, _ state: State) -> Result<Void, ReceiptsClientError>? {
        if let failure = state.failure { return .failure(error(failure)) }
        if let durable = state.log?.durablePosition, position <= durable { return .success(()) }
        return nil
    }

    private static func error(_ error: LogError) -> ReceiptsClientError {
        ReceiptsClientError(.unavailable, "the outbox log failed", cause: error)
    }
}
