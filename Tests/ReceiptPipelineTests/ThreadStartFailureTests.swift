import Dispatch
import Foundation
import Logging
import ReceiptLog
import ReceiptsCore
import ReceiptsReplication
import ReceiptsWire
import Synchronization
import Testing

@testable import ReceiptsService

/// Helper threads that cannot be started. The seam is `ThreadStarter.failing`: `pthread_create`
/// itself refuses the named thread (it cannot map a stack larger than any address space, and
/// returns the EAGAIN a process out of threads or memory gets), every other thread starts as
/// usual. The worker then fails before it is ready, naming the thread and the errno (the error
/// receiptd logs as it exits); a compaction fails like one whose write failed; and nothing
/// waits for a thread that never ran.
@Suite struct ThreadStartFailureTests {
    private static let logger = Logger(label: "thread-start-test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The threads `run()` starts before it is ready: the replay helper (recovery), the
    /// publishing thread and, on a primary, the shipping thread (whose replication endpoint is
    /// bound already, and must be let go of).
    @Test(.timeLimit(.minutes(1)), arguments: ["log-replay", "receiptd-pub", "receiptd-ship"])
    func aWorkerWhoseThreadCannotStartFailsBeforeItIsReady(thread: String) throws {
        var template = Array("/tmp/thread-start-test-XXXXXX".utf8CString)
        let root = String(cString: try #require(mkdtemp(&template)))
        defer { try? FileManager.default.removeItem(atPath: root) }
        var configuration = ServiceConfiguration(dataDirectory: root + "/data")
        if thread == "receiptd-ship" {
            configuration.replication = ReplicationSettings(
                member: "receiptd-0",
                role: .primary,
                endpoint: "ipc://\(root)/replication"
            )
        }
        configuration.threadStarter = .failing([thread])

        let (wasReady, failure) = try Self.run(configuration)
        #expect(!wasReady, "ready although \(thread) never started")
        let error = try #require(failure, "run() did not fail")
        #expect(error.description.contains("cannot start the \(thread) thread"), "\(error)")
        #expect(error.description.contains("pthread_create: Resource temporarily unavailable"), "\(error)")

        // The failed run let go of the log and the endpoints: the same directory serves at once.
        configuration.threadStarter = .standard
        let (readyAgain, failureAgain) = try Self.run(configuration)
        #expect(readyAgain)
        #expect(failureAgain == nil, "\(String(describing: failureAgain))")
    }

    @Test(.timeLimit(.minutes(1)))
    func aCompactionThreadThatCannotStartIsAFailedCompaction() async throws {
        let fixture = try PipelineFixture { $0.threadStarter = .failing(["receiptd-snap"]) }
        fixture.ingest([.conversationUpserted(conversation: "c", kind: .direct, members: ["ann", "bob"])])
        try await fixture.settle()

        let reply = try await fixture.compact()
        guard case .error(let error) = reply else { throw PipelineTestError("not an error: \(reply)") }
        #expect(error.code == .internal)
        #expect(error.message.contains("cannot start the receiptd-snap thread"), "\(error.message)")
        #expect(error.message.contains("pthread_create"), "\(error.message)")
        #expect(fixture.counter("receiptd.compactions.failed") == 1)
        #expect(!fixture.pipeline.compaction.isRunning)
        #expect(
            fixture.pipeline.compaction.notBeforeMonotonic > 0,
            "tried again after the pause, as after a failed write"
        )

        // Intake goes on, and shutdown finds no compaction to wait for.
        fixture.ingest([.messageSent(conversation: "c", message: "m1", sender: "ann", isSystem: false)])
        try await fixture.settle()
        #expect(try fixture.sink.ingestReplies().last?.results == [.accepted(held: false)])
        try fixture.pipeline.shutDown()
    }

    /// Runs a worker on `configuration` on a thread of its own until it is ready or `run()`
    /// returns (at most 30 seconds), then stops it and waits for `run()` to return.
    /// - Returns: Whether it was ready, and what `run()` threw.
    private static func run(_ configuration: ServiceConfiguration) throws -> (ready: Bool, failure: ServiceError?) {
        let service = try ReceiptService(configuration: configuration, logger: logger)
        let readyOrDone = DispatchSemaphore(value: 0)
        let state = Mutex<(ready: Bool, failure: ServiceError?)>((false, nil))
        let thread = try ThreadStarter.standard.start("test-worker") {
            do throws(ServiceError) {
                try service.run(onReady: {
                    state.withLock { $0.ready = true }
                    readyOrDone.signal()
                })
            } catch {
                state.withLock { $0.failure = error }
            }
            readyOrDone.signal()
        }.get()
        _ = readyOrDone.wait(timeout: .now() + 30)
        service.stop()
        pthread_join(thread, nil)
        return state.withLock { $0 }
    }
}
