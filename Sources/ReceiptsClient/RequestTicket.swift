import Synchronization

/// One caller's request on its way to the loop, and its cancellation.
///
/// Posting and cancelling take the same lock, so a cancel is posted only after its request
/// (the inbox keeps order): the loop never sees a cancel for a request still to come. A task
/// cancelled before its request was posted does not post it at all, unless it must go out
/// anyway (events taken into the outbox): then its cancel follows it.
final class RequestTicket: Sendable {
    let id: UInt64
    private let inbox: ClientInbox
    private let state = Mutex<(posted: Bool, cancelled: Bool)>((false, false))

    init(id: UInt64, inbox: ClientInbox) {
        self.id = id
        self.inbox = inbox
    }

    /// Posts the command `make` builds (under the inbox's lock, see ``ClientInbox/post(_:)``),
    /// or calls `refuse`: cancelled already, the client is shut down, or `make` threw.
    /// - Parameters:
    ///   - evenIfCancelled: Post it even if cancelled already (the caller is answered `.cancelled`).
    ///   - make: Builds the command.
    ///   - refuse: Called with the reason when nothing was posted.
    func post(
        evenIfCancelled: Bool,
        _ make: () throws(ReceiptsClientError) -> ClientCommand,
        refuse: (ReceiptsClientError) -> Void
    ) {
        let failure = state.withLock { state -> ReceiptsClientError? in
            if state.cancelled, !evenIfCancelled {
                return ReceiptsClientError(.cancelled, "cancelled before it was sent")
            }
            do throws(ReceiptsClientError) {
                guard try inbox.post(make) else { return ClientLoop.closedError }
            } catch {
                return error
            }
            state.posted = true
            if state.cancelled { inbox.post(.cancel(id: id)) }
            return nil
        }
        if let failure { refuse(failure) }
    }

    /// Tells the loop the caller stopped waiting (or keeps the request from being posted).
    func cancel() {
        state.withLock { state in
            state.cancelled = true
            if state.posted { inbox.post(.cancel(id: id)) }
        }
    }
}
