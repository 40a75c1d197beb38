import Foundation
import Synchronization
import ZeroMQ

/// A subscriber on its own thread that takes every message of some topic prefixes and throws it
/// away, counting them: a gateway that follows those topics, for rows that measure what
/// following them costs the worker.
final class TopicDrain: Sendable {
    private let stopRequested = Atomic<Bool>(false)
    private let received = Atomic<Int>(0)
    /// Set once the socket is connected (nil) or could not be made (the error).
    private let started = Mutex<String??>(nil)
    private let done = Atomic<Bool>(false)

    /// Starts the thread; returns once its SUB socket is connected, plus the slow joiner's 300 ms.
    /// - Throws: `LoadgenError` if the socket cannot be made.
    init(context: ZMQContext, endpoint: String, prefixes: [String]) throws {
        let thread = Thread { [self] in
            do {
                let socket = try ZMQSocket(context: context, type: .sub)
                defer { socket.close() }
                try socket.setReceiveHighWaterMark(0)
                try socket.setReceiveTimeout(milliseconds: 100)
                for prefix in prefixes { try socket.subscribe(prefix) }
                try socket.connect(endpoint)
                started.withLock { $0 = .some(nil) }
                while !stopRequested.load(ordering: .acquiring) {
                    if try socket.receiveMultipart(dontWait: false, { _ in () }) != nil {
                        received.add(1, ordering: .relaxed)
                    }
                }
            } catch {
                started.withLock { $0 = .some("\(error)") }
            }
            done.store(true, ordering: .releasing)
        }
        thread.name = "loadgen-drain"
        thread.start()
        while true {
            if let outcome = started.withLock({ $0 }) {
                if let failure = outcome { throw LoadgenError(.protocolViolation, failure) }
                break
            }
            usleep(1000)
        }
        usleep(300_000)
    }

    /// Stops the thread and returns how many messages it took.
    func finish() -> Int {
        stopRequested.store(true, ordering: .releasing)
        while !done.load(ordering: .acquiring) { usleep(2000) }
        return received.load(ordering: .relaxed)
    }
}
