import Testing
import ZeroMQ

struct RouterTests {
    @Test("with ROUTER_MANDATORY a reply to an unknown identity throws hostUnreachable")
    func routerMandatory() throws {
        let context = try ZMQContext()
        let router = try makeSocket(context, .router)
        try router.bind("inproc://mandatory")

        // Without the option the message vanishes and the send reports success.
        #expect(try router.send([bytes("nobody"), [], bytes("lost")]))

        try router.setRouterMandatory(true)
        let error = #expect(throws: ZMQError.self) { try router.send([bytes("nobody"), [], bytes("reply")]) }
        #expect(error?.code == .hostUnreachable)

        // A known peer still gets its reply, and the socket is not left mid-message.
        let dealer = try makeSocket(context, .dealer)
        try dealer.setRoutingID("known")
        try dealer.connect("inproc://mandatory")
        #expect(try dealer.send([bytes("hi")]))
        #expect(try router.receiveMultipart() == [bytes("known"), bytes("hi")])
        #expect(try router.send([bytes("known"), bytes("reply")]))
        #expect(try dealer.receiveMultipart() == [bytes("reply")])
    }

    @Test("an oversized message is dropped and the socket keeps serving other peers", arguments: [Transport.tcp, .ipc])
    func maxMessageSize(transport: Transport) throws {
        let context = try ZMQContext()
        let directory = try TemporaryDirectory()
        let router = try makeSocket(context, .router)
        try router.setMaxMessageSize(1_024)
        let endpoint = try bindFresh(router, transport, in: directory)

        let big = try makeSocket(context, .dealer)
        try big.setRoutingID("big")
        try big.setSendTimeout(milliseconds: testReceiveTimeout)
        try big.connect(endpoint)
        let small = try makeSocket(context, .dealer)
        try small.setRoutingID("small")
        try small.connect(endpoint)

        #expect(try big.send([[UInt8](repeating: 1, count: 4_096)]))
        #expect(try small.send([bytes("fits")]))
        var received: [[[UInt8]]] = []
        while received.last != [bytes("small"), bytes("fits")] {
            received.append(try #require(try router.receiveMultipart()))
        }
        #expect(received == [[bytes("small"), bytes("fits")]])

        // The big sender was disconnected; after it reconnects its small messages get through.
        try router.setReceiveTimeout(milliseconds: 20)
        var recovered = false
        for attempt in 0..<500 where !recovered {
            #expect(try big.send([bytes("retry-\(attempt)")]))
            while let message = try router.receiveMultipart() {
                #expect(message.count == 2)
                #expect(message.reduce(0) { $0 + $1.count } <= 1_024)
                recovered = recovered || message.first == bytes("big")
            }
        }
        #expect(recovered)
        try router.setReceiveTimeout(milliseconds: testReceiveTimeout)
        #expect(try small.send([bytes("still here")]))
        var last = try router.receiveMultipart()
        while last?.first == bytes("big") {
            last = try router.receiveMultipart()
        }
        #expect(last == [bytes("small"), bytes("still here")])
    }
}
