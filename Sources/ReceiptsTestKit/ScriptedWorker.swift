import Foundation
package import ReceiptsClient
package import ReceiptsCore
package import ReceiptsWire
import Synchronization
import ZeroMQ

/// A stand-in for a receiptd worker that answers from a script, for answers the real one
/// cannot give yet (a conversation `moving` between workers): a ROUTER on the ingest and one on
/// the query endpoint a ``Cluster/Worker/init(dataDirectory:)`` names, served by its own thread.
package final class ScriptedWorker: Sendable {
    /// The ingest script: the events of a frame and how many frames came before it.
    package typealias IngestScript = @Sendable (_ events: [Event], _ frameIndex: Int) -> IngestReply
    /// The query script: the query and how many queries came before it.
    package typealias QueryScript = @Sendable (_ query: Query, _ queryIndex: Int) -> QueryReply

    package let directory: String
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let log = Mutex<(frames: [[EventID]], queryCount: Int)>(([], 0))

    /// Binds the endpoints under a fresh directory and starts answering.
    /// - Parameters:
    ///   - ingest: The answer to each ingest frame.
    ///   - query: The answer to each query; an error for every one by default.
    /// - Throws: `TestKitError` if no directory can be made, `ZMQError` if an endpoint cannot be bound.
    package init(ingest: @escaping IngestScript, query: @escaping QueryScript = ScriptedWorker.refuseQueries) throws {
        directory = try TemporaryDirectory.make(prefix: "rdsw")
        endpoints = Cluster.Worker(dataDirectory: directory)
        let context = try ZMQContext()
        let ingestSocket = try ZMQSocket(context: context, type: .router)
        let querySocket = try ZMQSocket(context: context, type: .router)
        try ingestSocket.bind(endpoints.ingest)
        try querySocket.bind(endpoints.query)
        // Made here so that binding errors reach the test, then handed to the thread for good.
        nonisolated(unsafe) let sockets = (ingest: ingestSocket, query: querySocket, context: context)
        let thread = Thread { [self] in
            serve(sockets.ingest, sockets.query, ingest: ingest, query: query)
            sockets.ingest.close()
            sockets.query.close()
            sockets.context.terminate()
            finished.signal()
        }
        thread.name = "scripted-worker"
        thread.start()
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The worker's endpoints.
    package let endpoints: Cluster.Worker

    /// The event ids of every frame received, in order.
    package var frames: [[EventID]] { log.withLock { $0.frames } }

    /// Stops answering and closes the sockets.
    package func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        finished.wait()
    }

    /// A query script that answers every query with an error.
    package static let refuseQueries: QueryScript = { _, _ in
        .error(ErrorReply(code: .invalidArgument, message: "the scripted worker answers no queries"))
    }

    private func serve(_ ingestSocket: ZMQSocket, _ querySocket: ZMQSocket, ingest: IngestScript, query: QueryScript) {
        var poller = ZMQPoller()
        _ = poller.add(ingestSocket)
        _ = poller.add(querySocket)
        while !stopping.load(ordering: .relaxed) {
            do {
                guard try poller.poll(timeoutMilliseconds: 20) > 0 else { continue }
                while let frames = try ingestSocket.receiveMultipart(dontWait: true) {
                    guard frames.count == 4, let events = try? EventBatchCodec.decode(frames[3]) else { continue }
                    let index = log.withLock { log in
                        log.frames.append(events.map(\.id))
                        return log.frames.count - 1
                    }
                    _ = try ingestSocket.send([frames[0], frames[1], [], ingest(events, index).encode()])
                }
                while let frames = try querySocket.receiveMultipart(dontWait: true) {
                    guard frames.count == 4, let decoded = try? Query.decode(frames[3]) else { continue }
                    let index = log.withLock { log in
                        log.queryCount += 1
                        return log.queryCount - 1
                    }
                    _ = try querySocket.send([frames[0], frames[1], [], query(decoded, index).encode()])
                }
            } catch {
                return
            }
        }
    }
}
