import Synchronization

/// Counters of what a client's loop did, readable from any thread.
final class ClientStatistics: Sendable {
    let framesSent = Atomic<Int>(0)
    let framesResent = Atomic<Int>(0)
    let unavailableReplies = Atomic<Int>(0)
    let malformedReplies = Atomic<Int>(0)
    let redirects = Atomic<Int>(0)
    let movingRetries = Atomic<Int>(0)
    let queryRedirects = Atomic<Int>(0)
    let queryRetries = Atomic<Int>(0)
    let queryTimeouts = Atomic<Int>(0)
    let snapshotRepairs = Atomic<Int>(0)
    let updatesCoalesced = Atomic<Int>(0)
    let primarySwitches = Atomic<Int>(0)
    let standbyReads = Atomic<Int>(0)
    let standbyFallbacks = Atomic<Int>(0)

    /// The values now.
    var snapshot: ReceiptsClient.Statistics {
        ReceiptsClient.Statistics(
            framesSent: framesSent.load(ordering: .relaxed),
            framesResent: framesResent.load(ordering: .relaxed),
            unavailableReplies: unavailableReplies.load(ordering: .relaxed),
            malformedReplies: malformedReplies.load(ordering: .relaxed),
            redirects: redirects.load(ordering: .relaxed),
            movingRetries: movingRetries.load(ordering: .relaxed),
            queryRedirects: queryRedirects.load(ordering: .relaxed),
            queryRetries: queryRetries.load(ordering: .relaxed),
            queryTimeouts: queryTimeouts.load(ordering: .relaxed),
            snapshotRepairs: snapshotRepairs.load(ordering: .relaxed),
            updatesCoalesced: updatesCoalesced.load(ordering: .relaxed),
            primarySwitches: primarySwitches.load(ordering: .relaxed),
            standbyReads: standbyReads.load(ordering: .relaxed),
            standbyFallbacks: standbyFallbacks.load(ordering: .relaxed)
        )
    }
}

extension Atomic where Value == Int {
    /// Adds to a counter (relaxed: counters order nothing).
    func add(_ amount: Int) {
        wrappingAdd(amount, ordering: .relaxed)
    }
}
