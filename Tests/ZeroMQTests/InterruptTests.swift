import Dispatch
import Foundation
import Glibc
import Synchronization
import Testing
import ZeroMQ

/// How many SIGUSR1 the test handler has seen.
private let signalsDelivered = Atomic<Int>(0)

/// Installs a SIGUSR1 handler that only counts, so a signal interrupts blocking calls without
/// killing the process.
private func installCountingHandler() {
    signal(SIGUSR1) { _ in
        signalsDelivered.add(1, ordering: .relaxed)
    }
}

/// Lets SIGUSR1 reach the calling thread: threads started from Swift Testing's (libdispatch)
/// workers inherit a mask that blocks it.
private func unblockSignal() {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGUSR1)
    pthread_sigmask(SIG_UNBLOCK, &set, nil)
}

/// Sends SIGUSR1 to `thread` and waits (boundedly) until the handler has run.
///
/// - Returns: Whether the handler ran.
private func interrupt(_ thread: pthread_t) -> Bool {
    let before = signalsDelivered.load(ordering: .relaxed)
    pthread_kill(thread, SIGUSR1)
    for _ in 0..<1_000_000 where signalsDelivered.load(ordering: .relaxed) == before {
        sched_yield()
    }
    return signalsDelivered.load(ordering: .relaxed) != before
}

struct InterruptTests {
    @Test("signals during a blocking receive are retried, not thrown")
    func receiveRetriesInterrupts() throws {
        installCountingHandler()
        let context = try ZMQContext()
        let push = try ZMQSocket(context: context, type: .push)
        try push.bind("inproc://interrupted-receive")
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let receiver = Mutex<pthread_t?>(nil)
        let outcome = Mutex<Result<[[UInt8]]?, ZMQError>?>(nil)
        Thread {
            unblockSignal()
            let result = Result { () throws(ZMQError) -> [[UInt8]]? in
                let pull = try ZMQSocket(context: context, type: .pull)
                try pull.setReceiveTimeout(milliseconds: testReceiveTimeout * 6)
                try pull.connect("inproc://interrupted-receive")
                receiver.withLock { $0 = pthread_self() }
                ready.signal()
                return try pull.receiveMultipart()
            }
            outcome.withLock { $0 = result }
            ready.signal()  // in case setup failed before signalling
            finished.signal()
            // Stay alive until the test stops signalling this thread.
            release.wait()
        }.start()
        ready.wait()
        let thread = try #require(receiver.withLock { $0 })
        // The receiver spends almost all its time blocked in libzmq, so these land there.
        for _ in 0..<20 {
            #expect(interrupt(thread))
        }
        release.signal()
        #expect(try push.send([bytes("after signals")]))
        finished.wait()
        #expect(outcome.withLock { $0 } == .success([bytes("after signals")]))
    }

    @Test("a signal during poll returns 0 so the caller loops")
    func pollReturnsZeroOnInterrupt() throws {
        installCountingHandler()
        let context = try ZMQContext()
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let poller = Mutex<pthread_t?>(nil)
        let outcome = Mutex<Result<Int, ZMQError>?>(nil)
        Thread {
            unblockSignal()
            let result = Result { () throws(ZMQError) -> Int in
                let pull = try ZMQSocket(context: context, type: .pull)
                try pull.bind("inproc://interrupted-poll")
                var items = ZMQPoller()
                items.add(pull)
                poller.withLock { $0 = pthread_self() }
                ready.signal()
                return try items.poll(timeoutMilliseconds: -1)
            }
            outcome.withLock { $0 = result }
            ready.signal()  // in case setup failed before signalling
            finished.signal()
            // Stay alive until the test stops signalling this thread.
            release.wait()
        }.start()
        ready.wait()
        let thread = try #require(poller.withLock { $0 })
        var attempts = 0
        // A signal that arrives before the thread enters zmq_poll is absorbed; keep knocking.
        while finished.wait(timeout: .now() + .milliseconds(5)) == .timedOut, attempts < 2_000 {
            #expect(interrupt(thread))
            attempts += 1
        }
        if attempts == 2_000 {
            context.shutdown()
            finished.wait()
        }
        release.signal()
        #expect(outcome.withLock { $0 } == .success(0))
    }
}
