import Synchronization
import ZeroMQ

/// The queue between callers on any thread and the loop that owns the sockets.
///
/// Callers append under a lock and ring the doorbell; the loop drains the doorbell, then takes
/// everything at once. So only the post that finds the queue empty needs to ring: a later one
/// is taken together with it (one pipe write per wake-up, not per call).
/// After ``close()`` nothing more is accepted, so no caller can wait on a loop that is gone.
final class ClientInbox: Sendable {
    /// Wakes the loop's poll.
    let doorbell: Doorbell
    private let state = Mutex<(commands: [ClientCommand], isClosed: Bool)>(([], false))

    init() throws(ZMQError) {
        doorbell = try Doorbell()
    }

    /// Queues a command for the loop.
    /// - Returns: false once the client is shut down (the command was not queued).
    @discardableResult
    func post(_ command: ClientCommand) -> Bool {
        let (posted, mustRing) = state.withLock { state in
            guard !state.isClosed else { return (false, false) }
            state.commands.append(command)
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
