public import Logging
public import ReceiptsReplication
import Synchronization

/// The `Coordinator` of one member of one ordinal, on etcd 3.4 through its JSON gateway
/// (deploy/REPLICATION.md, sections 3, 5.3, 6.2 and 7.3).
///
/// `start()` grants the member's lease (after revoking the one a previous run left in the lease
/// file) and renews it every TTL/3, each keepalive bounded by TTL/3. `leaseDeadline` follows the
/// keepalives that succeed. If a keepalive finds the lease gone (etcd expired or revoked it: the
/// primary key, if this member held one, went with it), the deadline stays where it was, in the
/// past by then, and a new lease is granted at once (a campaign that finds its lease revoked drops
/// it, and the next renewal round grants one). The campaign, the in-sync write,
/// the resignation and the hand-over are single transactions; `changes()` is a watch on the
/// ordinal's keys.
public final class EtcdCoordinator: Coordinator {
    private let gateway: EtcdGateway
    private let keys: OrdinalKeys
    private let member: String
    private let leaseTTLSeconds: Int64
    private let leaseFile: LeaseFile?
    private let logger: Logger
    private let deadline = Atomic<UInt64>(0)
    private let state = Mutex(State())

    /// The lifecycle, and what `close()` stops.
    private struct State {
        enum Phase {
            case idle, starting, running, closed
        }

        var phase = Phase.idle
        /// The lease this member holds; 0 when it has none (before the grant, or found gone).
        var lease: Int64 = 0
        var renewal: Task<Void, Never>?
        var watches: [Int: Watch] = [:]
        var nextWatch = 0
        var renewalsSuspended = false
    }

    /// An open `changes()` stream.
    private struct Watch {
        var task: Task<Void, Never>
        var continuation: AsyncThrowingStream<OrdinalState, any Error>.Continuation
    }

    /// A coordinator for `member` of `ordinal`; nothing is sent before `start()`.
    ///
    /// - Parameters:
    ///   - endpoints: etcd's client URLs (`http://127.0.0.1:2379`), at least one.
    ///   - prefix: The cluster's key prefix (`--etcd-prefix`).
    ///   - ordinal: The worker index.
    ///   - member: This member's name, unique in the cluster.
    ///   - leaseTTLSeconds: The lease's TTL (`--lease-ttl-s`); etcd's minimum is 2 with its
    ///     default election timeout.
    ///   - leaseFilePath: Where the granted lease's id is kept (`<data-dir>/lease`), or nil.
    ///   - logger: For lease changes (info, warning) and failed calls (debug).
    /// - Throws: `CoordinationError` when no endpoint is given, one is not `http://host:port`
    ///   (receiptd does not speak TLS to etcd yet), or the TTL is below 1 s.
    public init(
        endpoints: [String],
        prefix: String = "/receiptd/default",
        ordinal: Int,
        member: String,
        leaseTTLSeconds: Int64 = 3,
        leaseFilePath: String? = nil,
        logger: Logger
    ) throws(CoordinationError) {
        guard !endpoints.isEmpty else { throw CoordinationError(.invalidUse, "etcd: no endpoint given") }
        guard leaseTTLSeconds >= 1 else {
            throw CoordinationError(.invalidUse, "etcd: a lease TTL of \(leaseTTLSeconds) s is below 1 s")
        }
        self.keys = OrdinalKeys(prefix: prefix, ordinal: ordinal)
        self.member = member
        self.leaseTTLSeconds = leaseTTLSeconds
        self.leaseFile = leaseFilePath.map(LeaseFile.init(path:))
        var logger = logger
        logger[metadataKey: "etcd.member"] = "\(member)"
        logger[metadataKey: "etcd.ordinal"] = "\(ordinal)"
        self.logger = logger
        self.gateway = try EtcdGateway(endpoints: endpoints, connectTimeout: .seconds(1))
    }

    /// How often the lease is renewed, and how long a keepalive may take: TTL/3.
    private var renewalInterval: Duration { .milliseconds(leaseTTLSeconds * 1000 / 3) }

    /// How long a unary call may take: the TTL (a campaign that takes longer lost its point).
    private var callTimeout: Duration { .seconds(leaseTTLSeconds) }

    /// Revokes the lease the lease file names, if any, grants a new one, records it in the
    /// file, and starts renewing it.
    ///
    /// - Throws: `CoordinationError` when etcd grants no lease, or the coordinator was started
    ///   or closed before.
    public func start() async throws(CoordinationError) {
        try state.withLock { state throws(CoordinationError) in
            guard state.phase == .idle else {
                throw CoordinationError(
                    .invalidUse,
                    "etcd start: the coordinator of \(member) was started or closed before"
                )
            }
            state.phase = .starting
        }
        do {
            if let old = leaseFile?.read() {
                do {
                    try await revoke(old)
                    logger.info("revoked the lease of a previous run", metadata: ["etcd.lease": "\(old)"])
                } catch {
                    logger.debug("could not revoke the lease of a previous run", metadata: ["error": "\(error)"])
                }
            }
            try await grant()
        } catch {
            state.withLock { $0.phase = .idle }
            throw error
        }
        let started = state.withLock { state -> Bool in
            guard state.phase == .starting else { return false }
            state.phase = .running
            state.renewal = Task { await self.renewUntilCancelled() }
            return true
        }
        if !started {
            throw CoordinationError(.invalidUse, "etcd start: the coordinator of \(member) was closed while starting")
        }
    }

    /// The ordinal's keys as they are now (one range read).
    ///
    /// - Throws: `CoordinationError` when etcd does not answer, or a key holds something else
    ///   than section 3.2 says.
    public func state() async throws(CoordinationError) -> OrdinalState {
        let request = EtcdMessages.RangeRequest(
            key: EtcdMessages.Bytes(keys.directory),
            rangeEnd: EtcdMessages.Bytes(keys.rangeEnd)
        )
        let answer: EtcdMessages.RangeResponse = try await gateway.call(
            "range",
            "/v3/kv/range",
            request,
            timeout: callTimeout
        )
        return try state(from: answer)
    }

    /// The campaign transaction of section 6.2.
    ///
    /// - Throws: `CoordinationError` when etcd does not answer (the outcome is unknown) or this
    ///   member holds no lease.
    public func campaign(
        _ primary: PrimaryRecord,
        inSync: InSyncRecord,
        over state: OrdinalState
    ) async throws(CoordinationError) -> CampaignOutcome {
        let lease = self.state.withLock { $0.lease }
        guard lease != 0 else { throw CoordinationError(.noLease, "etcd campaign: \(member) holds no lease") }
        let transaction = EtcdMessages.TxnRequest(
            compare: [
                .init(key: keys.primary, target: .create, equals: 0),
                .init(key: keys.term, target: .mod, equals: state.termRevision),
                .init(key: keys.inSync, target: .mod, equals: state.inSyncRevision),
            ],
            success: [
                .put(key: keys.primary, value: OrdinalKeys.value(primary), lease: lease),
                .put(key: keys.term, value: OrdinalKeys.value(term: primary.term), lease: 0),
                .put(key: keys.inSync, value: OrdinalKeys.value(inSync), lease: 0),
            ],
            failure: [.range(.init(key: .init(keys.directory), rangeEnd: .init(keys.rangeEnd)))]
        )
        let answer: EtcdMessages.TxnResponse
        do {
            answer = try await gateway.call("campaign", "/v3/kv/txn", transaction, timeout: callTimeout)
        } catch  where error.code == .leaseNotFound {
            // Revoked on etcd before a keepalive said so (etcd back after a pause): the member
            // holds no lease, and the next renewal round grants one.
            self.state.withLock { if $0.lease == lease { $0.lease = 0 } }
            throw error
        }
        if answer.succeeded {
            return .won(guardRevision: answer.header?.revision ?? 0)
        }
        let range = answer.responses?.first?.responseRange ?? .init(header: answer.header, kvs: [])
        return .lost(try self.state(from: range, revision: answer.header?.revision))
    }

    /// Writes the in-sync key, guarded by the primary key's create revision (section 5.3).
    ///
    /// - Returns: Whether it was written.
    /// - Throws: `CoordinationError` when etcd does not answer.
    public func recordInSync(_ record: InSyncRecord, guardRevision: Int64) async throws(CoordinationError) -> Bool {
        let transaction = EtcdMessages.TxnRequest(
            compare: [.init(key: keys.primary, target: .create, equals: guardRevision)],
            success: [.put(key: keys.inSync, value: OrdinalKeys.value(record), lease: 0)]
        )
        let answer: EtcdMessages.TxnResponse = try await gateway.call(
            "record in-sync",
            "/v3/kv/txn",
            transaction,
            timeout: callTimeout
        )
        return answer.succeeded
    }

    /// Deletes the primary key, guarded by its create revision.
    ///
    /// - Throws: `CoordinationError` when etcd does not answer.
    public func resign(guardRevision: Int64) async throws(CoordinationError) {
        let transaction = EtcdMessages.TxnRequest(
            compare: [.init(key: keys.primary, target: .create, equals: guardRevision)],
            success: [.delete(key: keys.primary)]
        )
        let _: EtcdMessages.TxnResponse = try await gateway.call(
            "resign",
            "/v3/kv/txn",
            transaction,
            timeout: callTimeout
        )
    }

    /// Writes the handover key and deletes the primary key in one transaction, guarded by the
    /// primary key's create revision (section 12.2).
    ///
    /// - Returns: Whether it was written.
    /// - Throws: `CoordinationError` when etcd does not answer (the outcome is unknown).
    public func handOver(_ record: HandOverRecord, guardRevision: Int64) async throws(CoordinationError) -> Bool {
        try await writeHandOver(
            record,
            "hand over",
            when: [.init(key: keys.primary, target: .create, equals: guardRevision)]
        )
    }

    public func takeOver(_ record: HandOverRecord, over state: OrdinalState) async throws(CoordinationError) -> Bool {
        // No primary key read: nothing to depose (etcd would take create revision 0 as "absent").
        guard state.primaryRevision != 0 else { return false }
        return try await writeHandOver(
            record,
            "take over",
            when: [
                .init(key: keys.primary, target: .create, equals: state.primaryRevision),
                .init(key: keys.term, target: .mod, equals: state.termRevision),
                .init(key: keys.inSync, target: .mod, equals: state.inSyncRevision),
            ]
        )
    }

    /// Writes `record` as the handover key and deletes the primary key in one transaction, if
    /// every comparison holds; whether it was written.
    private func writeHandOver(
        _ record: HandOverRecord,
        _ call: String,
        when compare: [EtcdMessages.Compare]
    ) async throws(CoordinationError) -> Bool {
        let transaction = EtcdMessages.TxnRequest(
            compare: compare,
            success: [
                .put(key: keys.handOver, value: OrdinalKeys.value(record), lease: 0),
                .delete(key: keys.primary),
            ]
        )
        let answer: EtcdMessages.TxnResponse = try await gateway.call(
            call,
            "/v3/kv/txn",
            transaction,
            timeout: callTimeout
        )
        return answer.succeeded
    }

    /// The ordinal's state now, then after every batch of watch events on its keys (each read
    /// again with `state()`, so a batch yields one state). When the watch breaks it reconnects
    /// after a short backoff, reading the state again (a state equal to the last one yielded is
    /// not repeated); it throws once etcd has been unreachable for the lease TTL, and ends at
    /// `close()`.
    public func changes() -> AsyncThrowingStream<OrdinalState, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: OrdinalState.self, throwing: (any Error).self)
        let watch = state.withLock { state -> Int? in
            guard state.phase != .closed else { return nil }
            let watch = state.nextWatch
            state.nextWatch += 1
            let task = Task { await self.watch(into: continuation) }
            state.watches[watch] = Watch(task: task, continuation: continuation)
            return watch
        }
        guard let watch else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            guard let removed = self?.state.withLock({ $0.watches.removeValue(forKey: watch) }) else { return }
            removed.task.cancel()
        }
        return stream
    }

    /// Until when this member's lease is certainly alive (monotonic nanoseconds); 0 before the
    /// first grant.
    public var leaseDeadline: UInt64 { deadline.load(ordering: .acquiring) }

    public var lease: Int64 { state.withLock { $0.lease } }

    /// Stops the renewals and the watches, revokes the lease (forgetting it in the lease file),
    /// and shuts the HTTP client down.
    public func close() async {
        let (renewal, watches, lease) = state.withLock { state in
            defer {
                state.phase = .closed
                state.renewal = nil
                state.watches.removeAll()
                state.lease = 0
            }
            return (state.renewal, Array(state.watches.values), state.lease)
        }
        renewal?.cancel()
        for watch in watches {
            watch.task.cancel()
            watch.continuation.finish()
        }
        if lease != 0 {
            do {
                try await revoke(lease)
                leaseFile?.remove()
            } catch {
                logger.debug("could not revoke the lease at close", metadata: ["error": "\(error)"])
            }
        }
        // Shutting the client down fails what is still in flight (a watch's open stream), so the
        // tasks end even where a call would not notice its cancellation.
        await gateway.shutdown()
        await renewal?.value
        for watch in watches { await watch.task.value }
    }

    /// For tests: stops the keepalives as a frozen process would, so that the lease expires on
    /// etcd's clock while everything else goes on.
    package func suspendRenewals() {
        state.withLock { $0.renewalsSuspended = true }
    }

    // MARK: - The lease

    /// Grants a lease and makes it this member's.
    private func grant() async throws(CoordinationError) {
        let sentAt = LeaseDeadline.now()
        let answer: EtcdMessages.LeaseResponse = try await gateway.call(
            "lease grant",
            "/v3/lease/grant",
            EtcdMessages.LeaseGrantRequest(ttl: .init(leaseTTLSeconds)),
            timeout: callTimeout
        )
        guard answer.id != 0, answer.ttl > 0 else {
            throw CoordinationError(
                .refused,
                "etcd lease grant: granted no lease (\(answer.error ?? "no error given"))"
            )
        }
        deadline.store(LeaseDeadline.after(sentAt: sentAt, ttlSeconds: answer.ttl), ordering: .releasing)
        state.withLock { $0.lease = answer.id }
        do {
            try leaseFile?.write(answer.id)
        } catch {
            logger.warning(
                "cannot record the lease id; a restart will wait for it to expire",
                metadata: ["etcd.lease.file": "\(leaseFile?.path ?? "")", "error": "\(error)"]
            )
        }
        logger.debug("lease granted", metadata: ["etcd.lease": "\(answer.id)", "etcd.lease.ttl": "\(answer.ttl)"])
    }

    private func revoke(_ lease: Int64) async throws(CoordinationError) {
        do {
            let _: EtcdMessages.HeaderResponse = try await gateway.call(
                "lease revoke",
                "/v3/lease/revoke",
                EtcdMessages.LeaseRequest(id: .init(lease)),
                timeout: .seconds(1)
            )
        } catch  where error.code == .leaseNotFound {
            // Already expired or revoked: what revoking wanted.
        }
    }

    /// The renewal rounds, every TTL/3, until `close()` cancels them. A lease found gone is
    /// replaced at once, not a round later: until then this member cannot campaign.
    private func renewUntilCancelled() async {
        var pause = renewalInterval
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: pause)
            } catch {
                return
            }
            pause = renewalInterval
            let (lease, suspended) = state.withLock { ($0.lease, $0.renewalsSuspended) }
            if suspended { continue }
            if lease == 0 {
                do {
                    try await grant()
                    logger.info("granted a new lease after the previous one was lost")
                } catch {
                    logger.debug("lease grant failed", metadata: ["error": "\(error)"])
                }
            } else {
                await keepAlive(lease)
                if state.withLock({ $0.lease }) == 0 { pause = .zero }
            }
        }
    }

    /// One keepalive: the deadline moves on if etcd renewed the lease; a TTL of 0 means the
    /// lease is gone, and a new one is granted at once.
    private func keepAlive(_ lease: Int64) async {
        let sentAt = LeaseDeadline.now()
        let answer: EtcdMessages.LeaseResponse
        do {
            answer = try await gateway.callStreamed(
                "lease keepalive",
                "/v3/lease/keepalive",
                EtcdMessages.LeaseRequest(id: .init(lease)),
                timeout: renewalInterval
            )
        } catch {
            logger.debug("lease keepalive failed", metadata: ["error": "\(error)"])
            return
        }
        guard answer.ttl > 0 else {
            state.withLock { if $0.lease == lease { $0.lease = 0 } }
            logger.warning(
                "the lease is gone (expired or revoked on etcd); the primary key, if held, went with it",
                metadata: ["etcd.lease": "\(lease)"]
            )
            return
        }
        deadline.store(LeaseDeadline.after(sentAt: sentAt, ttlSeconds: answer.ttl), ordering: .releasing)
    }

    // MARK: - The watch

    /// Feeds one `changes()` stream until its task is cancelled or etcd stays unreachable for
    /// the TTL.
    private func watch(into continuation: AsyncThrowingStream<OrdinalState, any Error>.Continuation) async {
        var last: OrdinalState?
        var failingSince: UInt64?
        var backoff = Duration.milliseconds(100)
        while !Task.isCancelled {
            do {
                let current = try await state()
                if current != last {
                    continuation.yield(current)
                    last = current
                }
                failingSince = nil
                backoff = .milliseconds(100)
                let request = EtcdMessages.WatchRequest(
                    key: Array(keys.directory.utf8),
                    rangeEnd: keys.rangeEnd,
                    startRevision: current.revision + 1
                )
                try await gateway.stream("watch", "/v3/watch", request) {
                    (message: EtcdMessages.WatchResponse) throws(CoordinationError) in
                    if message.canceled {
                        throw CoordinationError(
                            .refused,
                            "etcd watch: cancelled by etcd (\(message.cancelReason ?? "no reason"))"
                        )
                    }
                    guard !(message.events ?? []).isEmpty else { return }
                    let current = try await state()
                    if current != last {
                        continuation.yield(current)
                        last = current
                    }
                }
            } catch {
                if Task.isCancelled { break }
                let now = LeaseDeadline.now()
                let since = failingSince ?? now
                failingSince = since
                if now - since >= UInt64(leaseTTLSeconds) * 1_000_000_000 {
                    continuation.finish(throwing: error)
                    return
                }
                logger.debug("watch broken; reconnecting", metadata: ["error": "\(error)"])
                do {
                    try await Task.sleep(for: backoff)
                } catch {
                    break
                }
                backoff = min(backoff * 2, .seconds(1))
            }
        }
        continuation.finish()
    }

    private func state(
        from range: EtcdMessages.RangeResponse,
        revision: Int64? = nil
    ) throws(CoordinationError) -> OrdinalState {
        let stored = (range.kvs ?? []).map { kv in
            OrdinalKeys.Stored(
                key: kv.key.text,
                value: kv.value?.bytes ?? [],
                createRevision: kv.createRevision?.value ?? 0,
                modRevision: kv.modRevision?.value ?? 0
            )
        }
        return try keys.state(from: stored, revision: revision ?? range.header?.revision ?? 0)
    }
}
