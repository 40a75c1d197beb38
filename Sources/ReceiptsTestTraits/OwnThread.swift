import Foundation
import ReceiptsTestKit
public import Testing

/// Runs each test case of a suite with a task executor of its own (a queue), not on the
/// cooperative pool, which has as many threads as cores; for suites that start processes, at
/// most as many such test cases at once as the machine has cores.
///
/// For two kinds of suites in one `swift test`: those whose tests block (a socket's reply, a
/// child process, a `usleep`), which on a 2-core machine held the whole pool two at a time; and
/// those whose tests are timed (lease keepalives, call timeouts), which must not wait behind
/// every other test for a thread. Before it, `swift test` without filters failed in the
/// coordination tests: leases expired and 300 ms timeouts fired after 30 s. The limit keeps
/// what the pool's width used to bound: off the pool, every process test would otherwise start
/// its daemons at once. (Timed suites take no slot: their time limits would count the wait.)
public struct OwnThread: SuiteTrait, TestTrait, TestScoping {
    /// Whether a test case takes one of the slots first.
    fileprivate let isLimited: Bool

    /// The test cases that may run at once with this trait.
    private static let slots = Slots(max(2, ProcessInfo.processInfo.activeProcessorCount))

    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> OwnThread? {
        // Only around a test case's run: a suite's scope would hold a slot for all of it.
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        if isLimited { await Self.slots.acquire() }
        do {
            try await withTaskExecutorPreference(BlockingWait.ownExecutor(label: "test-\(test.name)")) {
                try await function()
            }
        } catch {
            if isLimited { await Self.slots.release() }
            throw error
        }
        if isLimited { await Self.slots.release() }
    }
}

extension Trait where Self == OwnThread {
    /// Each test case on a thread of its own (``OwnThread``): for timed suites.
    public static var ownThread: Self { OwnThread(isLimited: false) }

    /// Each test case on a thread of its own, as many at once as cores (``OwnThread``): for
    /// suites whose tests start processes and block on them.
    public static var startsProcesses: Self { OwnThread(isLimited: true) }
}

/// A counting semaphore for tasks: waiters are let in in the order they came.
private actor Slots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) {
        free = count
    }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}

extension Task where Failure == any Error {
    /// An unstructured task with a task executor of its own. A plain `Task {}` does not keep a
    /// test's executor preference (``OwnThread``): it runs on the cooperative pool, where it can
    /// wait behind every other test of the run for seconds.
    @discardableResult
    public static func onOwnThread(_ operation: sending @escaping () async throws -> Success) -> Task {
        Task(executorPreference: BlockingWait.ownExecutor(label: "test-task"), operation: operation)
    }
}

extension Task where Failure == Never {
    /// An unstructured task with a task executor of its own (see the throwing one).
    @discardableResult
    public static func onOwnThread(_ operation: sending @escaping () async -> Success) -> Task {
        Task(executorPreference: BlockingWait.ownExecutor(label: "test-task"), operation: operation)
    }
}
