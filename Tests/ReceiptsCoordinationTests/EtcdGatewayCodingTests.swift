import Foundation
import ReceiptsReplication
import Testing

@testable import ReceiptsCoordination

/// The JSON of etcd 3.4's gateway, from bodies recorded with curl against `etcd-server` 3.4.23
/// (deploy/REPLICATION.md, section 3.3): base64 keys and values, 64-bit integers as strings or
/// numbers, omitted defaults, error bodies and stream framing. No etcd runs here.
struct EtcdGatewayCodingTests {
    static func decode<Value: Decodable>(_ type: Value.Type, _ json: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    static func encode(_ value: some Encodable) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: JSONEncoder().encode(value))
        return try #require(object as? [String: Any])
    }

    @Test func int64ValuesAreReadFromStringsOrNumbersAndWrittenAsStrings() throws {
        #expect(
            try Self.decode(EtcdMessages.Int64Value.self, #""7587869471625364481""#).value == 7_587_869_471_625_364_481
        )
        #expect(try Self.decode(EtcdMessages.Int64Value.self, "42").value == 42)
        #expect(try Self.decode(EtcdMessages.Int64Value.self, #""-1""#).value == -1)
        #expect(throws: DecodingError.self) { try Self.decode(EtcdMessages.Int64Value.self, #""4x""#) }
        #expect(throws: DecodingError.self) { try Self.decode(EtcdMessages.Int64Value.self, #""9223372036854775808""#) }
        let written = String(
            decoding: try JSONEncoder().encode(EtcdMessages.Int64Value(9_223_372_036_854_775_807)),
            as: UTF8.self
        )
        #expect(written == #""9223372036854775807""#)
    }

    @Test func keysAndValuesAreBase64BothWays() throws {
        let key = EtcdMessages.Bytes("/receiptd/default/ordinals/3/")
        let written = String(decoding: try JSONEncoder().encode(key), as: UTF8.self)
        #expect(written == #""L3JlY2VpcHRkL2RlZmF1bHQvb3JkaW5hbHMvMy8=""#)
        #expect(try Self.decode(EtcdMessages.Bytes.self, written) == key)
        #expect(try Self.decode(EtcdMessages.Bytes.self, #""Mg==""#).bytes == Array("2".utf8))
        #expect(throws: DecodingError.self) { try Self.decode(EtcdMessages.Bytes.self, #""!!""#) }
    }

    @Test func omittedFieldsReadAsTheirDefaults() throws {
        let failed = try Self.decode(EtcdMessages.TxnResponse.self, #"{"header":{"revision":"2"}}"#)
        #expect(!failed.succeeded)
        #expect(failed.header?.revision == 2)
        let gone = try Self.decode(
            EtcdMessages.LeaseResponse.self,
            #"{"header":{"cluster_id":"1","member_id":"2","revision":"1","raft_term":"2"},"ID":"123"}"#
        )
        #expect(gone.id == 123 && gone.ttl == 0)
        let put = try Self.decode(EtcdMessages.Event.self, #"{"kv":{"key":"L3AvdGVybQ==","mod_revision":"4"}}"#)
        #expect(!put.isDelete)
        let delete = try Self.decode(EtcdMessages.Event.self, #"{"type":"DELETE","kv":{"key":"L3AvdGVybQ=="}}"#)
        #expect(delete.isDelete)
        #expect(try Self.decode(EtcdMessages.Header.self, "{}").revision == 0)
        let empty = try Self.decode(EtcdMessages.RangeResponse.self, #"{"header":{"revision":"1"}}"#)
        #expect(empty.kvs == nil)
    }

    @Test func aLostCampaignsRangeIsTheOrdinalsState() throws {
        // The failure branch's answer, as etcd 3.4.23 wrote it (keys /p/primary and /p/term).
        let keys = OrdinalKeys(prefix: "/receiptd/default", ordinal: 3)
        let primary = OrdinalKeys.value(
            PrimaryRecord(member: "a", term: 7, replication: "r", ingest: "i", query: "q", publish: "p")
        )
        let json = """
            {"header":{"cluster_id":"15118495548433857066","member_id":"13668033151171901709","revision":"9","raft_term":"2"},\
            "responses":[{"response_range":{"header":{"revision":"9"},"kvs":[\
            {"key":"\(Data(keys.primary.utf8).base64EncodedString())","create_revision":"8","mod_revision":"8",\
            "version":"1","value":"\(Data(primary).base64EncodedString())","lease":"7587869471625364481"},\
            {"key":"\(Data(keys.term.utf8).base64EncodedString())","create_revision":"2","mod_revision":"8",\
            "version":"3","value":"Nw=="}],"count":"2"}}]}
            """
        let answer = try Self.decode(EtcdMessages.TxnResponse.self, json)
        #expect(!answer.succeeded)
        let kvs = try #require(answer.responses?.first?.responseRange?.kvs)
        #expect(kvs[0].lease?.value == 7_587_869_471_625_364_481)
        let state = try keys.state(
            from: kvs.map {
                OrdinalKeys.Stored(
                    key: $0.key.text,
                    value: $0.value?.bytes ?? [],
                    createRevision: $0.createRevision?.value ?? 0,
                    modRevision: $0.modRevision?.value ?? 0
                )
            },
            revision: answer.header?.revision ?? 0
        )
        #expect(state.primary?.member == "a" && state.primaryRevision == 8)
        #expect(state.term == 7 && state.termRevision == 8)
        #expect(state.inSync == nil && state.inSyncRevision == 0)
        #expect(state.revision == 9)
    }

    @Test func theCampaignTransactionIsWrittenAsTheGatewayReadsIt() throws {
        let transaction = EtcdMessages.TxnRequest(
            compare: [
                .init(key: "/k/primary", target: .create, equals: 0),
                .init(key: "/k/term", target: .mod, equals: 12),
            ],
            success: [
                .put(key: "/k/primary", value: Array("v".utf8), lease: 99),
                .put(key: "/k/term", value: Array("1".utf8), lease: 0),
                .delete(key: "/k/in-sync"),
            ],
            failure: [.range(.init(key: .init("/k/"), rangeEnd: .init("/k0")))]
        )
        let object = try Self.encode(transaction)
        let compare = try #require(object["compare"] as? [[String: Any]])
        #expect(compare[0]["key"] as? String == "L2svcHJpbWFyeQ==")
        #expect(compare[0]["target"] as? String == "CREATE" && compare[0]["result"] as? String == "EQUAL")
        #expect(compare[0]["create_revision"] as? String == "0")
        #expect(compare[1]["target"] as? String == "MOD" && compare[1]["mod_revision"] as? String == "12")
        #expect(compare[1]["create_revision"] == nil)
        let success = try #require(object["success"] as? [[String: Any]])
        let put = try #require(success[0]["request_put"] as? [String: Any])
        #expect(put["value"] as? String == "dg==" && put["lease"] as? String == "99")
        let unleased = try #require(success[1]["request_put"] as? [String: Any])
        #expect(unleased["lease"] == nil)
        #expect((success[2]["request_delete_range"] as? [String: Any])?["key"] as? String == "L2svaW4tc3luYw==")
        let failure = try #require(object["failure"] as? [[String: Any]])
        #expect((failure[0]["request_range"] as? [String: Any])?["range_end"] as? String == "L2sw")
    }

    @Test func theOrdinalsRangeEndIsItsDirectoryWithTheLastBytePlusOne() {
        let keys = OrdinalKeys(prefix: "/receiptd/default/", ordinal: 3)
        #expect(keys.directory == "/receiptd/default/ordinals/3/")
        #expect(keys.rangeEnd == Array("/receiptd/default/ordinals/30".utf8))
        #expect(keys.primary == "/receiptd/default/ordinals/3/primary")
        #expect(keys.contains(keys.inSync) && !keys.contains("/receiptd/default/ordinals/30/primary"))
    }

    @Test func aKeyHoldingSomethingElseIsNamedInTheError() {
        let keys = OrdinalKeys(prefix: "/x", ordinal: 1)
        let badTerm = OrdinalKeys.Stored(key: keys.term, value: Array("seven".utf8), createRevision: 2, modRevision: 2)
        #expect { try keys.state(from: [badTerm], revision: 2) } throws: { error in
            (error as? CoordinationError)?.message.contains("/x/ordinals/1/term") == true
        }
        let badPrimary = OrdinalKeys.Stored(
            key: keys.primary,
            value: Array("{}".utf8),
            createRevision: 2,
            modRevision: 2
        )
        #expect { try keys.state(from: [badPrimary], revision: 2) } throws: { error in
            (error as? CoordinationError)?.message.contains("/x/ordinals/1/primary") == true
        }
    }

    @Test func anHTTPErrorBodyNamesTheCallTheEndpointAndTheCode() {
        let body =
            #"{"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5}"#
        let error = EtcdGateway.httpError(
            "lease revoke",
            "http://127.0.0.1:2379/v3/lease/revoke",
            404,
            Array(body.utf8)
        )
        #expect(error.message.contains("lease revoke"))
        #expect(error.message.contains("http://127.0.0.1:2379/v3/lease/revoke"))
        #expect(error.message.contains("HTTP 404"))
        #expect(error.message.contains("requested lease not found (gRPC code 5)"))
        #expect(error.code == .leaseNotFound)
        let html = EtcdGateway.httpError("range", "http://h/v3/kv/range", 502, Array("<html>".utf8))
        #expect(html.message.contains("HTTP 502: <html>"))
        #expect(html.code == .refused)
    }

    /// Decisions read the code, never the message: etcd's lease-gone refusal is recognised in
    /// one place, by its gRPC code and its message together.
    @Test(
        arguments: [
            (5, "etcdserver: requested lease not found", CoordinationError.Code.leaseNotFound),
            (5, "etcdserver: key not found", .refused),
            (nil, "etcdserver: requested lease not found", .refused),
            (14, "etcdserver: no leader", .unavailable),
            (4, "context deadline exceeded", .unavailable),
            (9, "etcdserver: mvcc: required revision has been compacted", .refused),
            (3, nil, .refused),
        ] as [(Int?, String?, CoordinationError.Code)]
    )
    func etcdsErrorsCarryACode(grpcCode: Int?, message: String?, code: CoordinationError.Code) {
        #expect(EtcdMessages.code(grpcCode: grpcCode, message: message) == code)
    }

    @Test func aStreamMessageIsItsResultOrItsError() throws {
        let keepalive = #"{"result":{"header":{"revision":"1"},"ID":"123","TTL":"3"}}"#
        let answer = try EtcdGateway.result(
            of: Array(keepalive.utf8),
            as: EtcdMessages.LeaseResponse.self,
            name: "lease keepalive",
            at: "u"
        )
        #expect(answer.id == 123 && answer.ttl == 3)
        let failed =
            #"{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","http_status":"Service Unavailable"}}"#
        #expect {
            try EtcdGateway.result(of: Array(failed.utf8), as: EtcdMessages.WatchResponse.self, name: "watch", at: "u")
        } throws: { error in
            (error as? CoordinationError)?.message.contains("etcdserver: no leader (gRPC code 14, HTTP 503)") == true
                && (error as? CoordinationError)?.code == .unavailable
        }
        #expect(throws: CoordinationError.self) {
            try EtcdGateway.result(of: Array("{}".utf8), as: EtcdMessages.WatchResponse.self, name: "watch", at: "u")
        }
    }

    @Test func aWatchStreamIsCutIntoItsMessagesWhereverItsChunksEnd() throws {
        // Three messages as etcd 3.4.23 streamed them, one per line; the value of the second
        // event is a JSON string holding braces and an escaped quote, to check the framing
        // reads strings.
        let stream = """
            {"result":{"header":{"revision":"3"},"created":true}}
            {"result":{"header":{"revision":"4"},"events":[{"kv":{"key":"L3AvdGVybQ==","mod_revision":"4","value":"Mg=="}}]}}
            {"result":{"header":{"revision":"5"},"events":[{"type":"DELETE","kv":{"key":"L3AvdGVybQ==","mod_revision":"5"}}],"cancel_reason":"a \\"}{\\" b"}}

            """
        let bytes = Array(stream.utf8)
        for chunkSize in [1, 2, 7, 64, bytes.count] {
            var framing = EtcdStreamFraming()
            var messages: [[UInt8]] = []
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + chunkSize, bytes.count)
                messages += try framing.append(bytes[offset..<end])
                offset = end
            }
            #expect(messages.count == 3, "chunks of \(chunkSize)")
            #expect(!framing.hasPartialMessage)
            let decoded = try messages.map {
                try EtcdGateway.result(of: $0, as: EtcdMessages.WatchResponse.self, name: "watch", at: "u")
            }
            #expect(decoded[0].created && (decoded[0].events ?? []).isEmpty)
            #expect(decoded[1].events?.first?.isDelete == false && decoded[1].header?.revision == 4)
            #expect(decoded[2].events?.first?.isDelete == true && decoded[2].cancelReason == #"a "}{" b"#)
        }
    }

    @Test func aStreamWithTextOutsideItsMessagesIsRefused() {
        var framing = EtcdStreamFraming()
        #expect(throws: EtcdStreamFraming.Malformed.self) { try framing.append(Array("}".utf8)) }
        var other = EtcdStreamFraming()
        #expect(throws: EtcdStreamFraming.Malformed.self) { try other.append(Array(#"{"a":1} x"#.utf8)) }
    }

    @Test func anEndlessMessageIsRefusedPastTheLimit() throws {
        var framing = EtcdStreamFraming()
        _ = try framing.append(Array(#"{"a":""#.utf8))
        let filler = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        #expect(throws: EtcdStreamFraming.Malformed.self) {
            for _ in 0..<5 { _ = try framing.append(filler) }
        }
    }

    @Test func theLeaseDeadlineKeepsAMarginOfAtLeastHalfASecond() {
        #expect(LeaseDeadline.after(sentAt: 10_000_000_000, ttlSeconds: 3) == 12_500_000_000)
        #expect(LeaseDeadline.after(sentAt: 10_000_000_000, ttlSeconds: 2) == 11_500_000_000)
        #expect(LeaseDeadline.after(sentAt: 10_000_000_000, ttlSeconds: 12) == 20_000_000_000)
        #expect(LeaseDeadline.after(sentAt: 10_000_000_000, ttlSeconds: 0) == 10_000_000_000)
    }

    @Test func anInvalidConfigurationIsRefusedBeforeAnythingIsSent() {
        #expect(throws: CoordinationError.self) {
            try EtcdCoordinator(endpoints: [], ordinal: 0, member: "m", logger: .init(label: "t"))
        }
        #expect {
            try EtcdCoordinator(endpoints: ["127.0.0.1:2379"], ordinal: 0, member: "m", logger: .init(label: "t"))
        } throws: {
            ($0 as? CoordinationError)?.message.contains("127.0.0.1:2379") == true
        }
        #expect(throws: CoordinationError.self) {
            try EtcdCoordinator(
                endpoints: ["http://127.0.0.1:2379"],
                ordinal: 0,
                member: "m",
                leaseTTLSeconds: 0,
                logger: .init(label: "t")
            )
        }
    }
}
