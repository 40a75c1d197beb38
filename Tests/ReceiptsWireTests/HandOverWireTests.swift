import ReceiptsWire
import Testing

/// The switchover's query and answer (`DemoteQuery`, `HandOverResult`, deploy/REPLICATION.md
/// section 12.2).
struct HandOverWireTests {
    @Test(arguments: ["", "receiptd-b-3", "é-0"])
    func demoteRoundTrips(to: String) throws {
        #expect(try Query.decode(Query.demote(to: to).encode()) == .demote(to: to))
        #expect(
            try Query.decodeAllowingStandby(Query.demote(to: to).encode(allowStandby: true)) == (.demote(to: to), true)
        )
    }

    /// A demote with no message body asks for any in-sync standby.
    @Test func emptyDemoteMessageIsAnyStandby() throws {
        let frame = ProtoWriter.build { $0.message(field: 15) { _ in } }
        #expect(try Query.decode(frame) == .demote(to: ""))
    }

    /// A target that is not UTF-8 or holds a NUL could name another member: refused.
    @Test func badTargetIsRefusedNamingTheField() {
        let notUTF8 = ProtoWriter.build { $0.message(field: 15) { $0.bytes(field: 1, [0x62, 0xFF]) } }
        #expect(throws: WireError(code: .invalidField, message: "query: to is not valid UTF-8")) {
            try Query.decode(notUTF8)
        }
        let nul = ProtoWriter.build { $0.message(field: 15) { $0.bytes(field: 1, [0x62, 0x00, 0x63]) } }
        #expect(throws: WireError(code: .invalidField, message: "query: to holds a NUL byte")) {
            try Query.decode(nul)
        }
    }

    @Test(arguments: [
        HandOverResult(from: "receiptd-3", to: "receiptd-b-3", term: 7),
        HandOverResult(from: "", to: "", term: 0),
        HandOverResult(from: "a", to: "b", term: .max),
    ])
    func handOverReplyRoundTrips(result: HandOverResult) throws {
        #expect(try QueryReply.decode(QueryReply.handOver(result).encode()) == .handOver(result))
    }

    /// A reply whose `hand_over` is set but empty reads as an empty result, not an unknown kind.
    @Test func emptyHandOverReplyDecodes() throws {
        let frame = ProtoWriter.build { $0.message(field: 13) { _ in } }
        #expect(try QueryReply.decode(frame) == .handOver(HandOverResult(from: "", to: "", term: 0)))
    }
}
