import Foundation
import Logging
import ReceiptsCore
import ReceiptsWire
import Testing

@testable import ReceiptLog
@testable import ReceiptsReplication
@testable import ReceiptsService

/// A pipeline on a fresh data directory under /tmp with a `RecordingSink`, driven directly:
/// frames in, `advance` by hand, outputs read back. No sockets, no process.
final class PipelineFixture {
    /// The data directory's parent (removed when the fixture goes away).
    let root: String
    var configuration: ServiceConfiguration
    let awaitingLimit: Int
    /// What acknowledgements wait for besides the log (replication tests).
    let gate: ReplicationGate?
    private(set) var sink = RecordingSink()
    private(set) var counters = ServiceCounters()
    private(set) var pipeline: ReceiptPipeline
    private var nextSequence: UInt64 = 1

    init(
        awaitingLimit: Int = ReceiptPipeline.maxAwaiting,
        gate: ReplicationGate? = nil,
        _ configure: (inout ServiceConfiguration) -> Void = { _ in }
    ) throws {
        var template = Array("/tmp/receipt-pipeline-test-XXXXXX".utf8CString)
        guard let path = mkdtemp(&template) else { throw POSIXError(.EIO) }
        root = String(cString: path)
        configuration = ServiceConfiguration(dataDirectory: root + "/data")
        configure(&configuration)
        self.awaitingLimit = awaitingLimit
        self.gate = gate
        pipeline = try Self.open(
            configuration,
            awaitingLimit: awaitingLimit,
            gate: gate,
            counters: counters,
            sink: sink
        )
    }

    deinit {
        pipeline.close()
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Closes the pipeline and opens a new one on the same directory (an in-process restart).
    func restart() throws {
        pipeline.close()
        sink = RecordingSink()
        counters = ServiceCounters()
        pipeline = try Self.open(
            configuration,
            awaitingLimit: awaitingLimit,
            gate: gate,
            counters: counters,
            sink: sink
        )
    }

    /// Opens a pipeline whose sink sees its log.
    private static func open(
        _ configuration: ServiceConfiguration,
        awaitingLimit: Int,
        gate: ReplicationGate?,
        counters: ServiceCounters,
        sink: RecordingSink
    ) throws -> ReceiptPipeline {
        let pipeline = try ReceiptPipeline(
            configuration: configuration,
            logger: Logger(label: "receipt-pipeline-test", factory: { _ in SwiftLogNoOpLogHandler() }),
            counters: counters,
            sink: sink,
            wake: {},
            awaitingLimit: awaitingLimit,
            gate: gate
        )
        sink.log = pipeline.log
        return pipeline
    }

    // MARK: - Input

    /// Events with fresh ids from one gateway source.
    func events(_ kinds: [EventKind]) -> [Event] {
        kinds.map { kind in
            defer { nextSequence += 1 }
            return Event(id: EventID(source: "gateway-a", sequence: nextSequence), kind: kind)
        }
    }

    /// Hands one acknowledged batch to the pipeline as from the ingest ROUTER, if the pipeline
    /// admits it (as the socket loop does).
    func ingest(_ kinds: [EventKind], peer: String = "gateway-a") {
        let frames = [Array(peer.utf8), [], EventBatchCodec.encode(events(kinds))]
        frames.withUnsafeBufferPointers { frames in
            guard pipeline.admits(frames, on: .ingest) else { return }
            pipeline.receiveIngest(frames, acknowledged: true)
        }
    }

    /// Hands one query to the pipeline as from the query ROUTER.
    func send(_ query: Query) {
        let frames = [Array("client".utf8), [], query.encode()]
        frames.withUnsafeBufferPointers { pipeline.receiveQuery($0, role: nil) }
    }

    /// Sends a query and returns its reply once everything it saw is durable.
    func ask(_ query: Query) async throws -> QueryReply {
        let before = sink.outputs.count
        send(query)
        try await settle()
        return try firstQueryReply(after: before, to: query)
    }

    /// Asks for a compaction and returns its answer, once it has finished.
    func compact() async throws -> QueryReply {
        let before = sink.outputs.count
        send(.compact)
        try await awaitCompaction(now: ServiceClock.monotonicMilliseconds())
        try await settle()
        return try firstQueryReply(after: before, to: .compact)
    }

    /// The first query reply among the outputs from index `start` on.
    private func firstQueryReply(after start: Int, to query: Query) throws -> QueryReply {
        for output in sink.outputs[start...] {
            if case .reply(.queries, let body, _) = output { return try QueryReply.decode(body) }
        }
        throw PipelineTestError("no reply to \(query.kindName)")
    }

    /// Makes the next snapshot fail to be written: a directory sits where its temporary file
    /// goes, for every position from the log's end up to `slack` bytes past it (a retention
    /// record is appended just before the snapshot is taken). Returns the undo.
    func blockSnapshots(slack: UInt64 = 0) throws -> () -> Void {
        let start = pipeline.log.appendedPosition.offset
        let paths = (start...start + slack).map { position in
            configuration.dataDirectory + "/"
                + LogFileName.temporary(forSnapshot: LogFileName.snapshot(position: position))
        }
        for path in paths { try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false) }
        return { for path in paths { try? FileManager.default.removeItem(atPath: path) } }
    }

    // MARK: - Driving

    /// Advances the pipeline (at `now`, monotonic milliseconds) until nothing waits for the
    /// log; at most 5 seconds.
    func settle(now: Int64? = nil) async throws {
        try Self.poll(seconds: 5) {
            try pipeline.advance(now: now ?? ServiceClock.monotonicMilliseconds())
            return pipeline.awaiting.isEmpty
        } failure: {
            "\(pipeline.awaiting.count) items still wait for the log after 5 s"
        }
    }

    /// Waits (without advancing the pipeline) until the log made everything appended durable; at most 5 seconds.
    func waitUntilDurable() async throws {
        let appended = pipeline.log.appendedPosition
        try Self.poll(seconds: 5) {
            pipeline.log.durablePosition >= appended
        } failure: {
            "\(appended) not durable after 5 s"
        }
    }

    /// Advances the pipeline at `now` until no compaction runs; at most 5 seconds.
    func awaitCompaction(now: Int64) async throws {
        try Self.poll(seconds: 5) {
            guard pipeline.compaction.isRunning else { return true }
            try pipeline.advance(now: now)
            return !pipeline.compaction.isRunning
        } failure: {
            "compaction still running after 5 s"
        }
    }

    /// Calls `done` about every millisecond until it says true; throws what `failure` says after
    /// `seconds`.
    ///
    /// It waits with `usleep`, holding its thread, not with `Task.sleep`: under the whole suite,
    /// tests blocking the cooperative pool's two threads left a sleeping test resumed only a few
    /// times in 20 s (`ReplicationPair.catchUp` failed so twice, its clock moved 90 ms).
    static func poll(seconds: Int, until done: () throws -> Bool, failure: () -> String) throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while try !done() {
            guard ContinuousClock.now < deadline else { throw PipelineTestError(failure()) }
            usleep(1000)
        }
    }

    /// A counter's value (0 if it was never registered).
    func counter(_ name: String, label: String = "") -> UInt64 {
        counters.snapshot().first { $0.name == name && $0.label == label }?.value ?? 0
    }
}

/// A test's own failure, with what went wrong.
struct PipelineTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension [[UInt8]] {
    /// Calls `body` with every frame borrowed as a raw buffer, as the socket loop hands them over.
    func withUnsafeBufferPointers<R>(_ body: ([UnsafeRawBufferPointer]) -> R) -> R {
        var buffers: [UnsafeRawBufferPointer] = []
        func borrow(_ index: Int) -> R {
            guard index < count else { return body(buffers) }
            return self[index].withUnsafeBytes { bytes in
                buffers.append(bytes)
                return borrow(index + 1)
            }
        }
        return borrow(0)
    }
}
