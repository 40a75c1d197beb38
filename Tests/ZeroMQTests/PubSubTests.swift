import Testing
import ZeroMQ

struct PubSubTests {
    /// Publishes `probe` until the subscriber receives something (a new subscriber always misses
    /// the first updates), bounded by attempts; returns every message received on the way.
    private func publishUntilReceived(
        _ publisher: ZMQSocket,
        _ subscriber: ZMQSocket,
        _ probe: [[UInt8]],
        attempts: Int = 500
    ) throws -> [[[UInt8]]] {
        for _ in 0..<attempts {
            #expect(try publisher.send(probe))
            if let message = try subscriber.receiveMultipart() {
                return [message]
            }
        }
        return []
    }

    @Test("a prefix subscription delivers topic and body and filters other topics", arguments: Transport.allCases)
    func prefixSubscription(transport: Transport) throws {
        let context = try ZMQContext()
        let directory = try TemporaryDirectory()
        let publisher = try makeSocket(context, .pub)
        let subscriber = try ZMQSocket(context: context, type: .sub)
        try subscriber.setReceiveTimeout(milliseconds: 10)
        try subscriber.subscribe("p07/")
        try subscriber.connect(try bindFresh(publisher, transport, in: directory))

        let first = try publishUntilReceived(publisher, subscriber, [bytes("p07/conv-1"), bytes("hello")])
        #expect(first == [[bytes("p07/conv-1"), bytes("hello")]])

        // One connection keeps order: if the marker arrives next, the other topic was filtered.
        #expect(try publisher.send([bytes("p08/conv-2"), bytes("not for us")]))
        #expect(try publisher.send([bytes("p07/conv-3"), bytes("marker")]))
        try subscriber.setReceiveTimeout(milliseconds: testReceiveTimeout)
        var next = try subscriber.receiveMultipart()
        while next == [bytes("p07/conv-1"), bytes("hello")] {
            next = try subscriber.receiveMultipart()
        }
        #expect(next == [bytes("p07/conv-3"), bytes("marker")])
    }

    @Test("after unsubscribe no message of the old topic arrives")
    func unsubscribe() throws {
        let context = try ZMQContext()
        let publisher = try makeSocket(context, .pub)
        let subscriber = try ZMQSocket(context: context, type: .sub)
        try subscriber.setReceiveTimeout(milliseconds: 10)
        try publisher.bind("tcp://127.0.0.1:*")
        try subscriber.subscribe("a")
        try subscriber.connect(try publisher.lastEndpoint)
        _ = try publishUntilReceived(publisher, subscriber, [bytes("a"), bytes("join")])

        try subscriber.unsubscribe("a")
        try subscriber.subscribe("c")
        // The unsubscribe travels before the new subscribe, so once "c" arrives "a" must stop.
        var received: [[[UInt8]]] = []
        for attempt in 0..<500 where !received.contains(where: { $0.first == bytes("c") }) {
            #expect(try publisher.send([bytes("a"), bytes("old-\(attempt)")]))
            #expect(try publisher.send([bytes("c"), bytes("probe-\(attempt)")]))
            while let message = try subscriber.receiveMultipart() {
                received.append(message)
            }
        }
        #expect(try publisher.send([bytes("a"), bytes("late")]))
        #expect(try publisher.send([bytes("c"), bytes("final")]))
        try subscriber.setReceiveTimeout(milliseconds: testReceiveTimeout)
        while received.last != [bytes("c"), bytes("final")] {
            received.append(try #require(try subscriber.receiveMultipart()))
        }

        let firstC = try #require(received.firstIndex { $0.first == bytes("c") })
        #expect(!received[firstC...].contains { $0.first == bytes("a") })
    }

    @Test("subscribing a socket that is not SUB is rejected")
    func subscribeOnWrongSocket() throws {
        let context = try ZMQContext()
        let push = try makeSocket(context, .push)
        let error = #expect(throws: ZMQError.self) { try push.subscribe("x") }
        #expect(error?.code == .invalidArgument)
        #expect(error?.operation == "setsockopt ZMQ_SUBSCRIBE")
    }

    @Test("an empty subscription receives everything")
    func subscribeAll() throws {
        let context = try ZMQContext()
        let publisher = try makeSocket(context, .pub)
        let subscriber = try ZMQSocket(context: context, type: .sub)
        try subscriber.setReceiveTimeout(milliseconds: 10)
        try subscriber.subscribe([])
        try publisher.bind("inproc://all")
        try subscriber.connect("inproc://all")
        let received = try publishUntilReceived(publisher, subscriber, [bytes("anything")])
        #expect(received == [[bytes("anything")]])
    }
}
