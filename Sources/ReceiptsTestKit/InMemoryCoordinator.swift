package import ReceiptsReplication
import Synchronization

/// A `Coordinator` whose service is an in-process `Store`: the semantics of `EtcdCoordinator`
/// (revisions, leases that expire on the service's clock, the campaign transaction, guarded
/// writes, watches), deterministic, for the in-process tests (deploy/REPLICATION.md, section 16).
///
/// Several members' coordinators share one `Store`, as they share one etcd. Time is the store's
/// own clock, which only `Store.advance(by:)` moves: a started coordinator renews its lease every
/// TTL/3 of that clock (while the store is available and its renewals are not stopped), and a
/// lease not renewed for its TTL expires, deleting the keys attached to it. `leaseDeadline` is on
/// that clock too (`Store.now` stands for `CLOCK_MONOTONIC`).
package final class InMemoryCoordinator: Coordinator {
    /// The shared "coordination service": keys with etcd's revisions, leases, watches, and a
    /// switch that makes it unreachable.
    package final class Store: Sendable {
        private let contents: Mutex<Contents>

        /// An empty store (revision 1, as a new etcd) whose clock reads `now` nanoseconds.
        package init(now: UInt64 = 1_000_000_000) {
            contents = Mutex(Contents(now: now))
        }

        /// The store's clock, in nanoseconds.
        package var now: UInt64 { contents.withLock { $0.now } }

        /// The store's revision: one more for every write.
        package var revision: Int64 { contents.withLock { $0.revision } }

        /// Whether the members can reach the service. While false every call throws
        /// `CoordinationError` and no lease is renewed, but the service itself goes on: leases
        /// still expire as the clock advances (a partition of every member from it). Setting it
        /// to false ends every open `changes()` stream with a `CoordinationError`.
        package var isAvailable: Bool {
            get { contents.withLock { $0.isAvailable } }
            set {
                let ended = contents.withLock { contents -> [Watcher] in
                    contents.isAvailable = newValue
                    guard !newValue else { return [] }
                    defer { contents.watchers.removeAll() }
                    return Array(contents.watchers.values)
                }
                for watcher in ended { watcher.continuation.finish(throwing: Store.unavailable("watch")) }
            }
        }

        /// Moves the clock forward by `nanoseconds`, renewing the leases of the coordinators that
        /// renew (every TTL/3, in order) and expiring the leases that were not renewed for their
        /// TTL, as the time passes.
        package func advance(by nanoseconds: UInt64) {
            contents.withLock { $0.advance(to: $0.now + nanoseconds) }
        }

        /// Moves the clock forward by `duration` (see `advance(by:)` with nanoseconds).
        package func advance(by duration: Duration) {
            let (seconds, attoseconds) = duration.components
            advance(by: UInt64(max(seconds, 0)) * 1_000_000_000 + UInt64(max(attoseconds, 0) / 1_000_000_000))
        }

        /// Expires `member`'s lease now, whatever its TTL (the keys attached to it go with it), as
        /// if the service had expired it early; its coordinator, if it renews, grants itself a new
        /// lease at its next renewal, as `EtcdCoordinator` does when a keepalive finds its lease
        /// gone. Its `leaseDeadline` is not moved.
        package func expireLease(of member: String) {
            contents.withLock { contents in
                for (_, renewer) in contents.renewers where renewer.member == member {
                    contents.revoke(lease: renewer.lease)
                }
            }
        }

        /// Stops renewing `member`'s lease, as if its process froze: the lease expires its TTL
        /// after the last renewal unless ``resumeRenewals(of:)`` comes first.
        package func stopRenewals(of member: String) {
            contents.withLock { contents in
                for (id, renewer) in contents.renewers where renewer.member == member {
                    contents.renewers[id]?.renewing = false
                }
            }
        }

        /// Renews `member`'s lease again, from a renewal period after now.
        package func resumeRenewals(of member: String) {
            contents.withLock { contents in
                for (id, renewer) in contents.renewers where renewer.member == member {
                    contents.renewers[id]?.renewing = true
                    contents.renewers[id]?.nextRenewal = contents.now + renewer.interval
                }
            }
        }

        fileprivate func withContents<Value: Sendable>(
            _ call: String,
            _ body: (inout Contents) throws(CoordinationError) -> Value
        ) throws(CoordinationError) -> Value {
            try contents.withLock { contents throws(CoordinationError) -> Value in
                guard contents.isAvailable else { throw Store.unavailable(call) }
                return try body(&contents)
            }
        }

        fileprivate func withContentsIgnoringAvailability<Value: Sendable>(_ body: (inout Contents) -> Value) -> Value {
            contents.withLock { body(&$0) }
        }

        fileprivate static func unavailable(_ call: String) -> CoordinationError {
            CoordinationError(.unavailable, "\(call): the in-memory coordination service is unavailable")
        }
    }

    private let store: Store
    private let keys: OrdinalKeys
    private let member: String
    private let leaseTTLSeconds: Int64
    /// This coordinator's identity in the store (its renewer and its watches).
    private let id: Int

    /// A coordinator for `member` of `ordinal`, on `store`. Nothing happens until `start()`.
    ///
    /// - Parameters:
    ///   - store: The shared service.
    ///   - prefix: The cluster's key prefix (`--etcd-prefix`).
    ///   - ordinal: The worker index.
    ///   - member: This member's name.
    ///   - leaseTTLSeconds: The lease's TTL on the store's clock.
    package init(
        store: Store,
        prefix: String = "/receiptd/default",
        ordinal: Int,
        member: String,
        leaseTTLSeconds: Int64 = 3
    ) {
        self.store = store
        self.keys = OrdinalKeys(prefix: prefix, ordinal: ordinal)
        self.member = member
        self.leaseTTLSeconds = leaseTTLSeconds
        self.id = store.withContentsIgnoringAvailability { contents in
            defer { contents.nextIdentity += 1 }
            return contents.nextIdentity
        }
    }

    /// Grants this member's lease; it is renewed every TTL/3 of the store's clock until `close()`.
    ///
    /// - Throws: `CoordinationError` when the store is unavailable or this coordinator was started
    ///   before.
    package func start() async throws(CoordinationError) {
        try store.withContents("start") { contents throws(CoordinationError) in
            guard contents.renewers[id] == nil else {
                throw CoordinationError(.invalidUse, "start: the coordinator of \(member) was started before")
            }
            let interval = UInt64(max(leaseTTLSeconds, 1)) * 1_000_000_000 / 3
            var renewer = Contents.Renewer(member: member, ttlSeconds: leaseTTLSeconds, interval: interval)
            renewer.nextRenewal = contents.now + interval
            contents.renewers[id] = renewer
            contents.grant(for: id)
        }
    }

    /// The ordinal's keys as they are now.
    ///
    /// - Throws: `CoordinationError` when the store is unavailable.
    package func state() async throws(CoordinationError) -> OrdinalState {
        try store.withContents("state") { contents throws(CoordinationError) in try contents.state(of: keys) }
    }

    /// The campaign transaction of section 6.2.
    ///
    /// - Throws: `CoordinationError` when the store is unavailable or this member holds no lease
    ///   (not started, closed, or its lease expired and was not granted again yet).
    package func campaign(
        _ primary: PrimaryRecord,
        inSync: InSyncRecord,
        over state: OrdinalState
    ) async throws(CoordinationError) -> CampaignOutcome {
        try store.withContents("campaign") { contents throws(CoordinationError) -> CampaignOutcome in
            guard let lease = contents.renewers[id]?.lease, contents.leases[lease] != nil else {
                throw CoordinationError(.noLease, "campaign: \(member) holds no lease")
            }
            guard contents.keys[keys.primary] == nil,
                contents.keys[keys.term]?.modRevision ?? 0 == state.termRevision,
                contents.keys[keys.inSync]?.modRevision ?? 0 == state.inSyncRevision
            else {
                return .lost(try contents.state(of: keys))
            }
            let revision = contents.write([
                (keys.primary, OrdinalKeys.value(primary), lease),
                (keys.term, OrdinalKeys.value(term: primary.term), 0),
                (keys.inSync, OrdinalKeys.value(inSync), 0),
            ])
            return .won(guardRevision: revision)
        }
    }

    /// Records `record` while the primary key is the one created at `guardRevision`.
    ///
    /// - Returns: Whether it was written.
    /// - Throws: `CoordinationError` when the store is unavailable.
    package func recordInSync(_ record: InSyncRecord, guardRevision: Int64) async throws(CoordinationError) -> Bool {
        try store.withContents("recordInSync") { contents throws(CoordinationError) -> Bool in
            guard contents.keys[keys.primary]?.createRevision == guardRevision else { return false }
            _ = contents.write([(keys.inSync, OrdinalKeys.value(record), 0)])
            return true
        }
    }

    /// Deletes the primary key while it is the one created at `guardRevision`.
    ///
    /// - Throws: `CoordinationError` when the store is unavailable.
    package func resign(guardRevision: Int64) async throws(CoordinationError) {
        try store.withContents("resign") { contents throws(CoordinationError) in
            guard contents.keys[keys.primary]?.createRevision == guardRevision else { return }
            contents.delete([keys.primary])
        }
    }

    /// Writes the handover key and deletes the primary key in one write, while the primary key is
    /// the one created at `guardRevision`.
    ///
    /// - Returns: Whether it was written.
    /// - Throws: `CoordinationError` when the store is unavailable.
    package func handOver(_ record: HandOverRecord, guardRevision: Int64) async throws(CoordinationError) -> Bool {
        try store.withContents("handOver") { contents throws(CoordinationError) -> Bool in
            guard contents.keys[keys.primary]?.createRevision == guardRevision else { return false }
            contents.write([(keys.handOver, OrdinalKeys.value(record), 0)], deleting: [keys.primary])
            return true
        }
    }

    package func takeOver(_ record: HandOverRecord, over state: OrdinalState) async throws(CoordinationError) -> Bool {
        try store.withContents("takeOver") { contents throws(CoordinationError) -> Bool in
            guard state.primaryRevision != 0, contents.keys[keys.primary]?.createRevision == state.primaryRevision,
                contents.keys[keys.term]?.modRevision ?? 0 == state.termRevision,
                contents.keys[keys.inSync]?.modRevision ?? 0 == state.inSyncRevision
            else { return false }
            contents.write([(keys.handOver, OrdinalKeys.value(record), 0)], deleting: [keys.primary])
            return true
        }
    }

    /// The ordinal's state now, then after every write that touches its keys. It throws when the
    /// store is or becomes unavailable, and ends at `close()`.
    package func changes() -> AsyncThrowingStream<OrdinalState, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: OrdinalState.self, throwing: (any Error).self)
        let registered: Result<Int, CoordinationError> = store.withContentsIgnoringAvailability { contents in
            guard contents.isAvailable else { return .failure(Store.unavailable("changes")) }
            do throws(CoordinationError) {
                continuation.yield(try contents.state(of: keys))
            } catch {
                return .failure(error)
            }
            let watch = contents.nextIdentity
            contents.nextIdentity += 1
            contents.watchers[watch] = Watcher(owner: id, keys: keys, continuation: continuation)
            return .success(watch)
        }
        let watch: Int
        switch registered {
        case .success(let registeredWatch):
            watch = registeredWatch
        case .failure(let error):
            continuation.finish(throwing: error)
            return stream
        }
        continuation.onTermination = { [store] _ in
            store.withContentsIgnoringAvailability { _ = $0.watchers.removeValue(forKey: watch) }
        }
        return stream
    }

    /// This member's lease deadline on the store's clock; 0 before `start()`.
    package var leaseDeadline: UInt64 {
        store.withContentsIgnoringAvailability { $0.renewers[id]?.deadline ?? 0 }
    }

    package var lease: Int64 {
        store.withContentsIgnoringAvailability { $0.renewers[id]?.lease ?? 0 }
    }

    /// The process died: its lease is no longer renewed (and so expires after its TTL, taking
    /// the keys attached to it), and nothing of it is revoked; a restarted member starts a new
    /// coordinator.
    package func abandon() {
        store.withContentsIgnoringAvailability { $0.renewers[id]?.closed = true }
    }

    /// Stops renewing, revokes the lease if the store is available (else it expires after its
    /// TTL, as an unreachable etcd's would), and ends this coordinator's `changes()` streams.
    package func close() async {
        let ended = store.withContentsIgnoringAvailability { contents -> [Watcher] in
            if let renewer = contents.renewers[id] {
                contents.renewers[id]?.closed = true
                if contents.isAvailable { contents.revoke(lease: renewer.lease) }
            }
            let mine = contents.watchers.filter { $0.value.owner == id }
            for watch in mine.keys { contents.watchers.removeValue(forKey: watch) }
            return Array(mine.values)
        }
        for watcher in ended { watcher.continuation.finish() }
    }
}

/// An open `changes()` stream: whose it is, which ordinal it watches, where its states go.
private struct Watcher: Sendable {
    var owner: Int
    var keys: OrdinalKeys
    var continuation: AsyncThrowingStream<OrdinalState, any Error>.Continuation
}

/// What a `Store` holds, behind its mutex: etcd's model reduced to what coordinators use.
private struct Contents {
    /// A key's value and revisions, and the lease it is attached to (0: none).
    struct Entry {
        var value: [UInt8]
        var createRevision: Int64
        var modRevision: Int64
        var lease: Int64
    }

    /// A lease's TTL and when it expires on the store's clock.
    struct Lease {
        var ttlSeconds: Int64
        var expiry: UInt64
    }

    /// A started coordinator: its lease, when it renews next, and its deadline.
    struct Renewer {
        var member: String
        var ttlSeconds: Int64
        var interval: UInt64
        var lease: Int64 = 0
        var nextRenewal: UInt64 = 0
        var deadline: UInt64 = 0
        var renewing = true
        var closed = false
    }

    var now: UInt64
    var revision: Int64 = 1
    var keys: [String: Entry] = [:]
    var leases: [Int64: Lease] = [:]
    /// Lease ids look like etcd's: large, and never 0 (etcd's "no lease").
    var nextLease: Int64 = 0x6957_0000_0000_0001
    var renewers: [Int: Renewer] = [:]
    var watchers: [Int: Watcher] = [:]
    var nextIdentity = 0
    var isAvailable = true

    /// Grants renewer `id` a new lease, from now.
    mutating func grant(for id: Int) {
        guard var renewer = renewers[id] else { return }
        let lease = nextLease
        nextLease += 1
        leases[lease] = Lease(ttlSeconds: renewer.ttlSeconds, expiry: now + UInt64(renewer.ttlSeconds) * 1_000_000_000)
        renewer.lease = lease
        renewer.deadline = LeaseDeadline.after(sentAt: now, ttlSeconds: renewer.ttlSeconds)
        renewers[id] = renewer
    }

    /// One renewal round of renewer `id`: its lease renewed from now, or, if it is gone, a new one.
    mutating func renew(_ id: Int) {
        guard let renewer = renewers[id] else { return }
        guard leases[renewer.lease] != nil else { return grant(for: id) }
        leases[renewer.lease]?.expiry = now + UInt64(renewer.ttlSeconds) * 1_000_000_000
        renewers[id]?.deadline = LeaseDeadline.after(sentAt: now, ttlSeconds: renewer.ttlSeconds)
    }

    /// The ordinal's state at the current revision.
    func state(of ordinal: OrdinalKeys) throws(CoordinationError) -> OrdinalState {
        let stored = keys.filter { ordinal.contains($0.key) }.map { key, entry in
            OrdinalKeys.Stored(
                key: key,
                value: entry.value,
                createRevision: entry.createRevision,
                modRevision: entry.modRevision
            )
        }
        return try ordinal.state(from: stored, revision: revision)
    }

    /// Puts every `(key, value, lease)` and deletes the keys `deleting` names in one write (one
    /// new revision, as an etcd transaction), and tells the watchers.
    ///
    /// - Returns: The write's revision.
    @discardableResult
    mutating func write(_ puts: [(key: String, value: [UInt8], lease: Int64)], deleting: [String] = []) -> Int64 {
        revision += 1
        for put in puts {
            let created = keys[put.key]?.createRevision ?? revision
            keys[put.key] = Entry(value: put.value, createRevision: created, modRevision: revision, lease: put.lease)
        }
        for key in deleting { keys.removeValue(forKey: key) }
        notify(puts.map(\.key) + deleting)
        return revision
    }

    /// Deletes the keys that exist among `deleted` in one write, and tells the watchers.
    mutating func delete(_ deleted: [String]) {
        let present = deleted.filter { keys[$0] != nil }
        guard !present.isEmpty else { return }
        revision += 1
        for key in present { keys.removeValue(forKey: key) }
        notify(present)
    }

    /// Ends `lease`, deleting the keys attached to it.
    mutating func revoke(lease: Int64) {
        guard leases.removeValue(forKey: lease) != nil else { return }
        delete(keys.filter { $0.value.lease == lease }.map(\.key))
    }

    /// Gives each watcher of a changed ordinal its state after the change (under the lock, so
    /// that every stream sees the writes in order; `yield` never blocks).
    func notify(_ changed: [String]) {
        for watcher in watchers.values where changed.contains(where: watcher.keys.contains) {
            if let state = try? state(of: watcher.keys) { watcher.continuation.yield(state) }
        }
    }

    /// Moves the clock to `target` event by event: renewals (before an expiry at the same
    /// instant) and expiries, in time order.
    mutating func advance(to target: UInt64) {
        while true {
            let renewal = renewers.filter { $0.value.renewing && !$0.value.closed }
                .min { ($0.value.nextRenewal, $0.key) < ($1.value.nextRenewal, $1.key) }
            let expiry = leases.min { ($0.value.expiry, $0.key) < ($1.value.expiry, $1.key) }
            let next = min(renewal?.value.nextRenewal ?? .max, expiry?.value.expiry ?? .max)
            guard next <= target else { break }
            now = next
            if let renewal, renewal.value.nextRenewal == next {
                renewers[renewal.key]?.nextRenewal += renewal.value.interval
                if isAvailable { renew(renewal.key) }
            } else if let expiry {
                revoke(lease: expiry.key)
            }
        }
        now = target
    }
}
