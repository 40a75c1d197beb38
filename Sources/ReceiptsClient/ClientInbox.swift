import Synchronization
import ZeroMQ

/// The queue between callers on any thread and the loop that owns the sockets.
///
/// Callers append under a lock and ring the doorbell; the loop drains the doorbell, then takes
/// everything at once. So only the post that finds the queue empty needs to ring: a later one
/// is taken together with it (one pipe write per wake-up, not per call).
/// After ``close()`` nothing more is accepted, so no caller can wait on a loop that is gone.
final class ClientInbox: Sendable {
    /// Wakes the loop's poll: rung by posts, and by the outbox when its durable position moves.
    let doorbell: Doorbell
    private let state = Mutex<(commands: [ClientCommand], isClosed: Bool)>(([], false))

    init() throws(ZMQError) {
        doorbell = try Doorbell()
    }

    /// Queues a command for the loop.
    /// - Returns: false once the client is shut down (the command was not queued).
    @discardableResult
    func post(_ command: ClientCommand) -> Bool {
        post { command }
    }

    /// Queues the command `make` builds under the inbox's lock, so commands are queued in the
    /// order they were made: ``ReceiptsClient`` numbers events (and appends them to its outbox)
    /// in `make`, and the loop must see a source's sequences in order (see `WorkerIngest`).
    ///
    /// Lock order: a ``RequestTicket``'s lock, this one, then the client's sequence and the
    /// outbox's locks (taken by `make`); nothing that holds one of those takes this one.
    /// - Returns: false once the client is shut down (`make` was not called).
    /// - Throws: What `make` throws; nothing was queued then.
    @discardableResult
    func post<Failure: Error>(_ make: () throws(Failure) -> ClientCommand) throws(Failure) -> Bool {
        let (posted, mustRing) = try state.withLock { state throws(Failure) -> (Bool, Bool) in
            guard !state.isClosed else { return (false, false) }
            state.commands.append(try make())
            return (true, state.commands.count == 1)
        }
        if mustRing { doorbell.ring() }
        return posted
    }

    /// Everything posted since the last call, in order.
    func take() -> [ClientCommand] {
        state.withLock { state in
            defer { state.commands.removeAll(keepingCapacity: true) }
            return state.commands
        }
    }

    /// Refuses further commands.
    /// - Returns: the commands still queued, for the loop to answer.
    func close() -> [ClientCommand] {
        state.withLock { state in
            state.isClosed = true
            defer { state.commands = [] }
            return state.commands
        }
    }
}
