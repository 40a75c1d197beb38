import Foundation
import Logging
import ReceiptsCoordination
import ReceiptsReplication
import ReceiptsTestKit
import Synchronization

/// Which coordinator a conformance test runs against.
enum Backend: String, CaseIterable, CustomStringConvertible, Sendable {
    case inMemory
    case etcd

    var description: String { rawValue }

    /// A fresh service of this kind, with nothing in it.
    func harness() async throws -> any CoordinationHarness {
        switch self {
        case .inMemory: InMemoryHarness()
        case .etcd: try await EtcdHarness()
        }
    }
}

/// One service and the coordinators of its members, and the ways a test drives them: time,
/// a member that stops renewing, a lease the service ends, an outage.
///
/// The in-memory service's time moves only when the test ticks it, so its tests are
/// deterministic; etcd's is real time, and a tick sleeps.
protocol CoordinationHarness: AnyObject {
    /// A started coordinator for `member` of `ordinal` with a lease of `ttlSeconds`.
    func coordinator(member: String, ordinal: Int, ttlSeconds: Int64) async throws -> any Coordinator
    /// Now, on the clock `leaseDeadline` is on.
    func now() -> UInt64
    /// Lets 100 ms pass.
    func tick() async throws
    /// Makes `member`'s coordinator stop renewing its lease, as a frozen process would.
    func stopRenewals(of member: String)
    /// Has the service end `member`'s lease now (its keys go with it).
    func endLease(of member: String) async throws
    /// Makes the service unreachable.
    func makeUnavailable()
    /// Closes every coordinator and stops the service.
    func tearDown() async
}

extension CoordinationHarness {
    /// A started coordinator with a 6 s lease (room for a loaded machine's late keepalives).
    func coordinator(member: String, ordinal: Int = 3) async throws -> any Coordinator {
        try await coordinator(member: member, ordinal: ordinal, ttlSeconds: 6)
    }

    /// Ticks until `condition` holds, for at most `seconds` of the harness's time.
    ///
    /// - Throws: `HarnessError` naming `what` when it never does.
    func waitUntil(_ what: String, seconds: Double = 8, _ condition: () async throws -> Bool) async throws {
        for _ in 0..<Int(seconds * 10) {
            if try await condition() { return }
            try await tick()
        }
        if try await condition() { return }
        throw HarnessError("\(what) did not happen within \(seconds) s")
    }
}

/// A harness's own failure.
struct HarnessError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The in-memory store, its clock driven by `tick()`.
final class InMemoryHarness: CoordinationHarness {
    let store = InMemoryCoordinator.Store()
    private var coordinators: [any Coordinator] = []

    func coordinator(member: String, ordinal: Int, ttlSeconds: Int64) async throws -> any Coordinator {
        let coordinator = InMemoryCoordinator(
            store: store,
            ordinal: ordinal,
            member: member,
            leaseTTLSeconds: ttlSeconds
        )
        try await coordinator.start()
        coordinators.append(coordinator)
        return coordinator
    }

    func now() -> UInt64 { store.now }
    /// Advances the store's clock, then lets the streams' consumers run (a moment of real time).
    func tick() async throws {
        store.advance(by: .milliseconds(100))
        try await Task.sleep(for: .milliseconds(1))
    }
    func stopRenewals(of member: String) { store.stopRenewals(of: member) }
    func endLease(of member: String) async throws { store.expireLease(of: member) }
    func makeUnavailable() { store.isAvailable = false }

    func tearDown() async {
        for coordinator in coordinators { await coordinator.close() }
    }
}

/// A real etcd on loopback; each coordinator keeps its lease file in the harness's directory,
/// which is how `endLease` finds the lease to revoke.
final class EtcdHarness: CoordinationHarness {
    let etcd: EtcdProcess
    let directory: String
    private var coordinators: [(member: String, coordinator: EtcdCoordinator)] = []

    init() async throws {
        etcd = try await EtcdProcess()
        directory = try TemporaryDirectory.make(prefix: "coord")
    }

    func leaseFilePath(of member: String) -> String { "\(directory)/\(member).lease" }

    func coordinator(member: String, ordinal: Int, ttlSeconds: Int64) async throws -> any Coordinator {
        let coordinator = try etcdCoordinator(member: member, ordinal: ordinal, ttlSeconds: ttlSeconds)
        try await coordinator.start()
        return coordinator
    }

    /// A coordinator not yet started (closed at `tearDown`).
    func etcdCoordinator(member: String, ordinal: Int = 3, ttlSeconds: Int64 = 3) throws -> EtcdCoordinator {
        var logger = Logger(label: "etcd-coordinator-test")
        logger.logLevel = .critical
        let coordinator = try EtcdCoordinator(
            endpoints: [etcd.clientURL],
            ordinal: ordinal,
            member: member,
            leaseTTLSeconds: ttlSeconds,
            leaseFilePath: leaseFilePath(of: member),
            logger: logger
        )
        coordinators.append((member, coordinator))
        return coordinator
    }

    func now() -> UInt64 { LeaseDeadline.now() }
    func tick() async throws { try await Task.sleep(for: .milliseconds(100)) }

    func stopRenewals(of member: String) {
        for entry in coordinators where entry.member == member { entry.coordinator.suspendRenewals() }
    }

    func endLease(of member: String) async throws {
        guard let text = try? String(contentsOfFile: leaseFilePath(of: member), encoding: .utf8),
            let lease = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw HarnessError("no lease file for \(member)")
        }
        // LoopbackHTTP, not URLSession: on Linux, URLSession stops the whole test process when
        // a connection closes without an answer.
        let response = URL(string: etcd.clientURL)?.port.flatMap { port in
            LoopbackHTTP.post(port: port, path: "/v3/lease/revoke", body: "{\"ID\":\"\(lease)\"}")
        }
        guard response?.status == 200 else {
            throw HarnessError(
                "revoking lease \(lease) answered \(response.map { "\($0.status) \($0.body)" } ?? "nothing")"
            )
        }
    }

    func makeUnavailable() { etcd.kill() }

    func tearDown() async {
        for entry in coordinators { await entry.coordinator.close() }
        etcd.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Everything a `changes()` stream yields, collected by a task, for tests to wait on.
final class StateRecorder: Sendable {
    private struct Recorded {
        var states: [OrdinalState] = []
        var ended = false
        var error: (any Error)?
    }

    private let recorded = Mutex(Recorded())
    private let consumer = Mutex<Task<Void, Never>?>(nil)

    /// Starts consuming `stream`, on an executor of its own (as the tests run, `OwnThread`):
    /// an unstructured task would take the cooperative pool's turn behind every other test.
    init(_ stream: AsyncThrowingStream<OrdinalState, any Error>) {
        let task = Task(executorPreference: BlockingWait.ownExecutor(label: "state-recorder")) { [self] in
            do {
                for try await state in stream { recorded.withLock { $0.states.append(state) } }
                recorded.withLock { $0.ended = true }
            } catch {
                recorded.withLock {
                    $0.ended = true
                    $0.error = error
                }
            }
        }
        consumer.withLock { $0 = task }
    }

    deinit { consumer.withLock { $0?.cancel() } }

    /// The states yielded so far.
    var states: [OrdinalState] { recorded.withLock { $0.states } }
    /// Whether the stream ended (finished or threw).
    var ended: Bool { recorded.withLock { $0.ended } }
    /// What the stream threw, if it did.
    var error: (any Error)? { recorded.withLock { $0.error } }
}
