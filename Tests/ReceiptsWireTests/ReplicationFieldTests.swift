import ReceiptsCore
import ReceiptsWire
import Testing

/// The fields replication adds to existing messages (deploy/REPLICATION.md sections 8.1 and
/// 10): `NOT_PRIMARY` and the primary it names, `Health`'s role, `Query.allow_standby` and
/// `QueryReply.served_by`. Old peers must read them as before.
struct ReplicationFieldTests {
    static let primary = ErrorReply.Primary(
        member: "receiptd-b-3",
        ingest: "tcp://receiptd-b-3.receiptd:7001",
        query: "tcp://receiptd-b-3.receiptd:7002",
        publish: "tcp://receiptd-b-3.receiptd:7003"
    )

    @Test func notPrimaryTravelsWithThePrimaryAndTheTerm() throws {
        let named = ErrorReply(code: .notPrimary, message: "standby", primary: Self.primary, term: 5)
        #expect(try QueryReply.decode(QueryReply.error(named).encode()) == .error(named))
        #expect(try IngestReply.decode(IngestReply(results: [], error: named).encode()).error == named)
        let electing = ErrorReply(code: .notPrimary, message: "election under way", term: 6)
        #expect(try QueryReply.decode(QueryReply.error(electing).encode()) == .error(electing))
        #expect(ErrorReply.Code.notPrimary.description == "not_primary")
    }

    @Test func thePrimaryAndTheTermTravelOnlyWithNotPrimary() throws {
        let reply = ErrorReply(code: .unavailable, message: "stopping", primary: Self.primary, term: 5)
        #expect(
            try QueryReply.decode(QueryReply.error(reply).encode())
                == .error(ErrorReply(code: .unavailable, message: "stopping"))
        )
    }

    @Test func aNotPrimaryWithoutAMemberNamesNoPrimary() throws {
        let frame = ProtoWriter.build { w in
            w.message(field: 9) { e in
                e.varint(field: 1, 11)
                e.string(field: 5, "tcp://orphan:7001")
                e.varint(field: 8, 2)
            }
        }
        #expect(try QueryReply.decode(frame) == .error(ErrorReply(code: .notPrimary, message: "", term: 2)))
    }

    @Test func wrongFrameCountsAreAnsweredAsSuch() {
        #expect(
            ErrorReply(WireError(code: .wrongFrameCount, message: "w"))
                == ErrorReply(code: .wrongFrameCount, message: "w")
        )
    }

    @Test func healthCarriesTheRole() throws {
        let health = Health(
            state: "serving",
            workerIndex: 3,
            workerCount: 4,
            uptimeMilliseconds: 99,
            publisherRun: 7,
            role: .standby,
            term: 5,
            member: "receiptd-b-3",
            applied: 1 << 33
        )
        #expect(try QueryReply.decode(QueryReply.health(health).encode()) == .health(health))
    }

    @Test func aHealthWithoutTheNewFieldsDecodesAsBefore() throws {
        let old = ProtoWriter.build { w in
            w.message(field: 6) { h in
                h.string(field: 1, "serving")
                h.varint(field: 2, 3)
                h.varint(field: 3, 4)
                h.varint(field: 4, 99)
                h.varint(field: 5, 7)
            }
        }
        let expected = Health(state: "serving", workerIndex: 3, workerCount: 4, uptimeMilliseconds: 99, publisherRun: 7)
        #expect(try QueryReply.decode(old) == .health(expected))
        #expect(expected.role == nil && expected.term == 0 && expected.member == "" && expected.applied == 0)
        // An unreplicated worker's answer sets none of them: the bytes an old decoder reads.
        #expect(QueryReply.health(expected).encode() == old)
    }

    @Test func queriesSayWhetherAStandbyMayAnswer() throws {
        for query in QueryTests.everyKind {
            let standby = try Query.decodeAllowingStandby(query.encode(allowStandby: true))
            #expect(standby.query == query && standby.allowStandby)
            let primary = try Query.decodeAllowingStandby(query.encode())
            #expect(primary.query == query && !primary.allowStandby)
            #expect(try Query.decode(query.encode(allowStandby: true)) == query)
        }
        // An old gateway's query never sets it; the field is outside the oneof.
        #expect(Query.health.encode(allowStandby: true) == Query.health.encode() + [0xA0, 0x01, 0x01])
    }

    @Test func repliesSayWhichMemberServedThem() throws {
        let servedBy = ServedBy(member: "receiptd-b-3", role: .standby, term: 5, applied: 4096, behindMilliseconds: 3)
        let reply = QueryReply.snapshot(
            ConversationSnapshot(conversation: "c", kind: .direct, members: ["a", "b"], messages: []),
            publisherRun: 2,
            sequence: 9
        )
        let decoded = try QueryReply.decodeServed(reply.encode(servedBy: servedBy))
        #expect(decoded.reply == reply && decoded.servedBy == servedBy)
        #expect(try QueryReply.decode(reply.encode(servedBy: servedBy)) == reply)
        let primary = try QueryReply.decodeServed(reply.encode())
        #expect(primary.reply == reply && primary.servedBy == nil)
        #expect(reply.encode() == reply.encode(servedBy: nil))
    }
}
