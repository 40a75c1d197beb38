import Dispatch
import Foundation
import Synchronization
import Testing
import ZeroMQ

struct LifecycleTests {
    @Test("close is idempotent and every later use throws notSocket")
    func useAfterClose() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context: context, type: .dealer)
        #expect(!socket.isClosed)
        socket.close()
        socket.close()
        #expect(socket.isClosed)

        let uses: [(String, () throws -> Void)] = [
            ("bind", { try socket.bind("inproc://x") }),
            ("connect", { try socket.connect("inproc://x") }),
            ("unbind", { try socket.unbind("inproc://x") }),
            ("disconnect", { try socket.disconnect("inproc://x") }),
            ("send", { _ = try socket.send([bytes("x")]) }),
            ("send frame", { _ = try socket.send(frame: UnsafeRawBufferPointer(start: nil, count: 0), more: false) }),
            ("receive", { _ = try socket.receiveMultipart() }),
            ("receive borrowed", { _ = try socket.receiveMultipart { $0.count } }),
            ("setsockopt", { try socket.setLinger(milliseconds: 0) }),
            ("getsockopt", { _ = try socket.linger }),
            ("lastEndpoint", { _ = try socket.lastEndpoint }),
        ]
        for (name, use) in uses {
            let error = #expect(throws: ZMQError.self, "\(name)") { try use() }
            #expect(error?.code == .notSocket, "\(name)")
            #expect(error?.message == "socket is closed", "\(name)")
        }
    }

    @Test("terminate returns after close even with a message queued for an absent peer")
    func terminateAfterClose() throws {
        let context = try ZMQContext()
        let push = try ZMQSocket(context: context, type: .push)
        try push.connect("inproc://never-bound")
        #expect(try push.send([bytes("stuck")]))
        push.close()
        context.terminate()
        context.terminate()
        #expect(context.isShutDown)
    }

    @Test("no socket can be made after shutdown or terminate")
    func socketAfterTerminate() throws {
        let shutDown = try ZMQContext()
        shutDown.shutdown()
        shutDown.shutdown()
        let afterShutdown = #expect(throws: ZMQError.self) { try ZMQSocket(context: shutDown, type: .pair) }
        #expect(afterShutdown?.code == .terminated)

        let terminated = try ZMQContext()
        terminated.terminate()
        let afterTerminate = #expect(throws: ZMQError.self) { try ZMQSocket(context: terminated, type: .pair) }
        #expect(afterTerminate?.code == .terminated)
    }

    @Test("shutdown makes send and receive throw terminated so loops exit")
    func operationsAfterShutdown() throws {
        let context = try ZMQContext()
        let pair = try makeSocket(context, .pair)
        try pair.bind("inproc://shutdown")
        context.shutdown()
        let receive = #expect(throws: ZMQError.self) { try pair.receiveMultipart() }
        #expect(receive?.code == .terminated)
        let send = #expect(throws: ZMQError.self) { try pair.send([bytes("x")]) }
        #expect(send?.code == .terminated)
        pair.close()
        context.terminate()
    }

    @Test("terminate from another thread ends a receive blocked without a timeout")
    func terminateUnblocksReceive() throws {
        let context = try ZMQContext()
        let ready = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let outcome = Mutex<ZMQError.Code?>(nil)
        let thread = Thread {
            do throws(ZMQError) {
                let pull = try ZMQSocket(context: context, type: .pull)
                try pull.bind("inproc://blocked")
                ready.signal()
                defer { pull.close() }
                _ = try pull.receiveMultipart()
            } catch {
                outcome.withLock { $0 = error.code }
                ready.signal()
            }
            finished.signal()
        }
        thread.start()
        ready.wait()
        context.terminate()
        finished.wait()
        #expect(outcome.withLock { $0 } == .terminated)
    }

    @Test("a socket keeps its context alive")
    func socketRetainsContext() throws {
        func makePair() throws -> (ZMQSocket, ZMQSocket) {
            let context = try ZMQContext()
            let a = try makeSocket(context, .pair)
            let b = try makeSocket(context, .pair)
            try a.bind("inproc://retained")
            try b.connect("inproc://retained")
            return (a, b)
        }
        let (a, b) = try makePair()
        #expect(try a.send([bytes("still alive")]))
        #expect(try b.receiveMultipart() == [bytes("still alive")])
    }

    @Test("endpoint errors carry errno, libzmq's text and the operation")
    func endpointErrors() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context: context, type: .pull)
        let other = try ZMQSocket(context: context, type: .pull)

        let transport = #expect(throws: ZMQError.self) { try socket.bind("carrier-pigeon://x") }
        #expect(transport?.code == .protocolNotSupported)
        #expect(transport?.operation == "bind carrier-pigeon://x")
        #expect(transport?.message == "Protocol not supported")

        try socket.bind("inproc://taken")
        let taken = #expect(throws: ZMQError.self) { try other.bind("inproc://taken") }
        #expect(taken?.code == .addressInUse)

        let notBound = #expect(throws: ZMQError.self) { try socket.unbind("inproc://never") }
        #expect(notBound?.code == .notFound)
        let notConnected = #expect(throws: ZMQError.self) { try socket.disconnect("tcp://127.0.0.1:1") }
        #expect(notConnected?.code == .notFound)
        let malformed = #expect(throws: ZMQError.self) { try socket.connect("tcp://127.0.0.1") }
        #expect(malformed?.code == .invalidArgument)

        try socket.unbind("inproc://taken")
        try other.bind("inproc://taken")
    }

    @Test("an invalid I/O thread count is rejected")
    func invalidContext() {
        let error = #expect(throws: ZMQError.self) { try ZMQContext(ioThreads: -1) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("error codes name themselves and unknown errnos round-trip")
    func errorCodes() {
        #expect(ZMQError.Code.other(EAGAIN) == .again)
        #expect(ZMQError.Code.terminated.description == "terminated")
        #expect(ZMQError.Code.other(9_999).description == "errno 9999")
        let error = ZMQError(code: .hostUnreachable, message: "Host unreachable", operation: "send")
        #expect(error.description == "send: Host unreachable (hostUnreachable)")
    }

    @Test("the linked libzmq is 4.x")
    func version() {
        #expect(ZMQ.version.major == 4)
        #expect(ZMQ.version.minor >= 3)
    }
}
