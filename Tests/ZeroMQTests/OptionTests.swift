import Testing
import ZeroMQ

struct OptionTests {
    @Test("options read back through zmq_getsockopt with their C types")
    func roundTrip() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context: context, type: .dealer)

        try socket.setSendHighWaterMark(123)
        #expect(try socket.sendHighWaterMark == 123)
        try socket.setReceiveHighWaterMark(456)
        #expect(try socket.receiveHighWaterMark == 456)
        try socket.setLinger(milliseconds: 250)
        #expect(try socket.linger == 250)
        // Beyond Int32: proves the int64_t option is passed as 8 bytes.
        try socket.setMaxMessageSize(5_000_000_000)
        #expect(try socket.maxMessageSize == 5_000_000_000)
        try socket.setMaxMessageSize(-1)
        #expect(try socket.maxMessageSize == -1)
        try socket.setReceiveTimeout(milliseconds: 1_500)
        #expect(try socket.receiveTimeout == 1_500)
        try socket.setSendTimeout(milliseconds: 2_500)
        #expect(try socket.sendTimeout == 2_500)
        try socket.setImmediate(true)
        #expect(try socket.immediate)
        try socket.setImmediate(false)
        #expect(try socket.immediate == false)
        try socket.setRoutingID("gateway-7")
        #expect(try socket.routingID == bytes("gateway-7"))
    }

    @Test("a new socket lingers 0 ms unless told otherwise")
    func defaultLinger() throws {
        let context = try ZMQContext()
        #expect(try ZMQSocket(context: context, type: .push).linger == 0)
        #expect(try ZMQSocket(context: context, type: .push, lingerMilliseconds: -1).linger == -1)
    }

    @Test("invalid option values throw invalidArgument naming the option")
    func invalidValues() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context: context, type: .dealer)

        let linger = #expect(throws: ZMQError.self) { try socket.setLinger(milliseconds: -2) }
        #expect(linger?.code == .invalidArgument)
        #expect(linger?.operation == "setsockopt ZMQ_LINGER")
        let empty = #expect(throws: ZMQError.self) { try socket.setRoutingID([]) }
        #expect(empty?.code == .invalidArgument)
        let long = #expect(throws: ZMQError.self) { try socket.setRoutingID([UInt8](repeating: 65, count: 256)) }
        #expect(long?.code == .invalidArgument)
        let hwm = #expect(throws: ZMQError.self) { try socket.setSendHighWaterMark(-1) }
        #expect(hwm?.code == .invalidArgument)
    }

    @Test("ROUTER_MANDATORY is rejected on a socket that is not ROUTER")
    func mandatoryOnWrongSocket() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context: context, type: .dealer)
        let error = #expect(throws: ZMQError.self) { try socket.setRouterMandatory(true) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("lastEndpoint reports the port chosen for tcp://127.0.0.1:*")
    func lastEndpoint() throws {
        let context = try ZMQContext()
        let socket = try ZMQSocket(context: context, type: .rep)
        #expect(try socket.lastEndpoint == "")
        try socket.bind("tcp://127.0.0.1:*")
        let endpoint = try socket.lastEndpoint
        #expect(endpoint.hasPrefix("tcp://127.0.0.1:"))
        let port = try #require(Int(endpoint.dropFirst("tcp://127.0.0.1:".count)))
        #expect(port > 0)
        try socket.unbind(endpoint)
    }
}
