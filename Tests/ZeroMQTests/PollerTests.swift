import Glibc
import Testing
import ZeroMQ

struct PollerTests {
    @Test("poll reports which socket has a message")
    func pollSockets() throws {
        let context = try ZMQContext()
        let first = try makeSocket(context, .pull)
        let second = try makeSocket(context, .pull)
        let push = try makeSocket(context, .push)
        try first.bind("inproc://first")
        try second.bind("inproc://second")
        try push.connect("inproc://second")

        var poller = ZMQPoller()
        let firstIndex = poller.add(first)
        let secondIndex = poller.add(second)
        #expect(poller.count == 2)
        #expect(try poller.poll(timeoutMilliseconds: 0) == 0)
        #expect(!poller.isReadable(firstIndex))

        #expect(try push.send([bytes("wake")]))
        #expect(try poller.poll(timeoutMilliseconds: Int(testReceiveTimeout)) == 1)
        #expect(!poller.isReadable(firstIndex))
        #expect(poller.isReadable(secondIndex))
        #expect(poller.returnedEvents(secondIndex) == .readable)
        #expect(try second.receiveMultipart(dontWait: true) == [bytes("wake")])
        #expect(try poller.poll(timeoutMilliseconds: 0) == 0)
        #expect(!poller.isReadable(secondIndex))
    }

    @Test("poll watches a raw file descriptor next to sockets")
    func pollPipe() throws {
        var fds: [Int32] = [-1, -1]
        #expect(pipe(&fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        let context = try ZMQContext()
        let pull = try makeSocket(context, .pull)
        try pull.bind("inproc://beside-pipe")

        var poller = ZMQPoller()
        let socketIndex = poller.add(pull)
        let pipeIndex = poller.add(fileDescriptor: fds[0])
        #expect(try poller.poll(timeoutMilliseconds: 10) == 0)
        #expect(!poller.isReadable(pipeIndex))

        var byte: UInt8 = 1
        #expect(write(fds[1], &byte, 1) == 1)
        #expect(try poller.poll(timeoutMilliseconds: Int(testReceiveTimeout)) == 1)
        #expect(poller.isReadable(pipeIndex))
        #expect(!poller.isReadable(socketIndex))
    }

    @Test("poll reports a socket that can send")
    func pollWritable() throws {
        let context = try ZMQContext()
        let pull = try makeSocket(context, .pull)
        let push = try makeSocket(context, .push)
        try pull.bind("inproc://writable")

        var poller = ZMQPoller()
        let index = poller.add(push, events: [.readable, .writable])
        #expect(try poller.poll(timeoutMilliseconds: 0) == 0)
        try push.connect("inproc://writable")
        #expect(try poller.poll(timeoutMilliseconds: Int(testReceiveTimeout)) == 1)
        #expect(poller.isWritable(index))
        #expect(!poller.isReadable(index))
    }

    @Test("polling a socket closed after it was added throws notSocket")
    func pollClosedSocket() throws {
        let context = try ZMQContext()
        let pull = try makeSocket(context, .pull)
        var poller = ZMQPoller()
        poller.add(pull)
        pull.close()
        let error = #expect(throws: ZMQError.self) { try poller.poll(timeoutMilliseconds: 0) }
        #expect(error?.code == .notSocket)
    }

    @Test("poll on a shut-down context throws terminated")
    func pollAfterShutdown() throws {
        let context = try ZMQContext()
        let pull = try makeSocket(context, .pull)
        var poller = ZMQPoller()
        poller.add(pull)
        context.shutdown()
        let error = #expect(throws: ZMQError.self) { try poller.poll(timeoutMilliseconds: -1) }
        #expect(error?.code == .terminated)
    }
}
