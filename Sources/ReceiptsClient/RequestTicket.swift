import Synchronization

/// One caller's request on its way to the loop, and its cancellation.
///
/// Posting and cancelling take the same lock, so a cancel is posted only after its request
/// (the inbox keeps order): the loop never sees a cancel for a request still to come. A task
/// cancelled before its request was posted does not post it at all.
final class RequestTicket: Sendable {
    let id: UInt64
    private let inbox: ClientInbox
    private let state = Mutex<(posted: Bool, cancelled: Bool)>((false, false))

    init(id: UInt64, inbox: ClientInbox) {
        self.id = id
        self.inbox = inbox
    }

    /// Posts the request, or calls `refuse` (cancelled already, or the client is shut down).
    func post(_ command: ClientCommand, refuse: (ReceiptsClientError) -> Void) {
        let failure = state.withLock { state -> ReceiptsClientError? in
            if state.cancelled { return ReceiptsClientError(.cancelled, "cancelled before it was sent") }
            guard inbox.post(command) else { return ClientLoop.closedError }
            state.posted = true
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
