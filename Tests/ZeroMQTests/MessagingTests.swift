import Testing
import ZeroMQ

struct MessagingTests {
    @Test("REQ/REP round trip", arguments: Transport.allCases)
    func requestReplyRoundTrip(transport: Transport) throws {
        let context = try ZMQContext()
        let directory = try TemporaryDirectory()
        let server = try makeSocket(context, .rep)
        let client = try makeSocket(context, .req)
        try client.connect(try bindFresh(server, transport, in: directory))

        #expect(try client.send([bytes("hello"), bytes("world")]))
        #expect(try server.receiveMultipart() == [bytes("hello"), bytes("world")])
        #expect(try server.send([bytes("reply")]))
        #expect(try client.receiveMultipart() == [bytes("reply")])
    }

    @Test("DEALER/ROUTER multipart round trip", arguments: Transport.allCases)
    func dealerRouterRoundTrip(transport: Transport) throws {
        let context = try ZMQContext()
        let directory = try TemporaryDirectory()
        let router = try makeSocket(context, .router)
        let dealer = try makeSocket(context, .dealer)
        try dealer.setRoutingID("dealer-1")
        try dealer.connect(try bindFresh(router, transport, in: directory))

        #expect(try dealer.send([bytes("a"), bytes("b")]))
        #expect(try router.receiveMultipart() == [bytes("dealer-1"), bytes("a"), bytes("b")])
        #expect(try router.send([bytes("dealer-1"), bytes("r")]))
        #expect(try dealer.receiveMultipart() == [bytes("r")])
    }

    @Test("ROUTER sees identity, empty delimiter and body from REQ")
    func requestThroughRouter() throws {
        let context = try ZMQContext()
        let router = try makeSocket(context, .router)
        let client = try makeSocket(context, .req)
        try router.bind("inproc://router")
        try client.connect("inproc://router")

        #expect(try client.send([bytes("body")]))
        let request = try #require(try router.receiveMultipart())
        #expect(request.count == 3)
        #expect(!request[0].isEmpty)
        #expect(request[1] == [])
        #expect(request[2] == bytes("body"))
        #expect(try router.send([request[0], [], bytes("ok")]))
        #expect(try client.receiveMultipart() == [bytes("ok")])
    }

    @Test("an 8 MiB frame arrives whole", arguments: [Transport.tcp, .ipc, .inproc])
    func largeFrame(transport: Transport) throws {
        let context = try ZMQContext()
        let directory = try TemporaryDirectory()
        let pull = try makeSocket(context, .pull)
        let push = try makeSocket(context, .push)
        try push.connect(try bindFresh(pull, transport, in: directory))
        let big = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 % 251) }

        #expect(try push.send([bytes("head"), big]))
        let received = try #require(try pull.receiveMultipart())
        #expect(received.count == 2)
        #expect(received[1].count == big.count)
        #expect(received[1] == big)
    }

    @Test("zero-length frames survive in any position")
    func zeroLengthFrames() throws {
        let context = try ZMQContext()
        let router = try makeSocket(context, .router)
        let dealer = try makeSocket(context, .dealer)
        try dealer.setRoutingID("d")
        try router.bind("inproc://empty")
        try dealer.connect("inproc://empty")

        #expect(try dealer.send([[], [], bytes("x"), []]))
        #expect(try router.receiveMultipart() == [bytes("d"), [], [], bytes("x"), []])
        #expect(try dealer.send([[]]))
        #expect(try router.receiveMultipart() == [bytes("d"), []])
    }

    @Test("a message can be sent frame by frame from borrowed buffers")
    func framewiseSend() throws {
        let context = try ZMQContext()
        let pull = try makeSocket(context, .pull)
        let push = try makeSocket(context, .push)
        try pull.bind("inproc://framewise")
        try push.connect("inproc://framewise")

        let first = bytes("first")
        let second = bytes("second")
        #expect(try first.withUnsafeBytes { buffer in try push.send(frame: buffer, more: true) })
        #expect(try second.withUnsafeBytes { buffer in try push.send(frame: buffer, more: false) })
        #expect(try push.send(frame: UnsafeRawBufferPointer(start: nil, count: 0), more: false))
        #expect(try pull.receiveMultipart() == [first, second])
        #expect(try pull.receiveMultipart() == [[]])
    }

    @Test("the zero-copy receive lends every frame and returns the body's value")
    func zeroCopyReceive() throws {
        let context = try ZMQContext()
        let pull = try makeSocket(context, .pull)
        let push = try makeSocket(context, .push)
        try pull.bind("inproc://borrow")
        try push.connect("inproc://borrow")
        // Short frames live inside zmq_msg_t itself; the long one is heap-allocated by libzmq.
        let long = [UInt8](repeating: 7, count: 100_000)
        #expect(try push.send([bytes("a"), [], long]))

        let summary = try pull.receiveMultipart { frames in
            frames.map { $0.count } + [Int(frames[0].first ?? 0), Int(frames[2].last ?? 0)]
        }
        #expect(summary == [1, 0, 100_000, Int(UInt8(ascii: "a")), 7])
        #expect(try pull.receiveMultipart(dontWait: true) { _ in 0 } == nil)
    }

    @Test("receiving again from inside the zero-copy body keeps both messages intact")
    func nestedReceive() throws {
        let context = try ZMQContext()
        let pull = try makeSocket(context, .pull)
        let push = try makeSocket(context, .push)
        try pull.bind("inproc://nested")
        try push.connect("inproc://nested")
        #expect(try push.send([bytes("outer-1"), bytes("outer-2")]))
        #expect(try push.send([bytes("inner")]))

        let result = try pull.receiveMultipart { outer in
            let inner = try? pull.receiveMultipart()
            return (outer.map { Array($0) }, inner)
        }
        #expect(result?.0 == [bytes("outer-1"), bytes("outer-2")])
        #expect(result?.1 == [bytes("inner")])
        #expect(try push.send([bytes("after")]))
        #expect(try pull.receiveMultipart() == [bytes("after")])
    }

    @Test("a receive timeout returns nil")
    func receiveTimeoutReturnsNil() throws {
        let context = try ZMQContext()
        let pull = try ZMQSocket(context: context, type: .pull)
        try pull.setReceiveTimeout(milliseconds: 20)
        try pull.bind("inproc://quiet")
        #expect(try pull.receiveMultipart() == nil)
    }

    @Test("dontWait on an empty socket returns nil")
    func dontWaitReturnsNil() throws {
        let context = try ZMQContext()
        let pull = try makeSocket(context, .pull)
        try pull.bind("inproc://empty-queue")
        #expect(try pull.receiveMultipart(dontWait: true) == nil)
    }

    @Test("dontWait sends return false once the high-water mark is reached")
    func highWaterMark() throws {
        let context = try ZMQContext()
        let pull = try makeSocket(context, .pull)
        let push = try makeSocket(context, .push)
        try push.setSendHighWaterMark(5)
        try pull.setReceiveHighWaterMark(5)
        try pull.bind("inproc://hwm")
        try push.connect("inproc://hwm")

        var accepted = 0
        while accepted < 10_000, try push.send([bytes("m\(accepted)"), bytes("tail")], dontWait: true) {
            accepted += 1
        }
        #expect(accepted > 0)
        #expect(accepted < 10_000)
        // Nothing was half-sent: the queued messages come out whole and in order.
        #expect(try pull.receiveMultipart() == [bytes("m0"), bytes("tail")])
    }

    @Test("a PUSH with no peer refuses a dontWait send")
    func noPeerSend() throws {
        let context = try ZMQContext()
        let push = try makeSocket(context, .push)
        try push.bind("inproc://lonely")
        #expect(try push.send([bytes("x")], dontWait: true) == false)
    }

    @Test("a send timeout without a peer returns false")
    func sendTimeout() throws {
        let context = try ZMQContext()
        let push = try makeSocket(context, .push)
        try push.setSendTimeout(milliseconds: 20)
        try push.bind("inproc://lonely-timeout")
        #expect(try push.send([bytes("x")]) == false)
    }

    @Test("an empty frame list is rejected")
    func emptyMessage() throws {
        let context = try ZMQContext()
        let push = try makeSocket(context, .push)
        let error = #expect(throws: ZMQError.self) { try push.send([]) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("REQ state machine errors surface as invalidState")
    func requestStateMachine() throws {
        let context = try ZMQContext()
        let server = try makeSocket(context, .rep)
        let client = try makeSocket(context, .req)
        try server.bind("inproc://fsm")
        try client.connect("inproc://fsm")

        let early = #expect(throws: ZMQError.self) { try client.receiveMultipart() }
        #expect(early?.code == .invalidState)
        #expect(try client.send([bytes("one")]))
        let twice = #expect(throws: ZMQError.self) { try client.send([bytes("two")]) }
        #expect(twice?.code == .invalidState)
        #expect(twice?.operation == "send")
    }
}
