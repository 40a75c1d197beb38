import Foundation
import ReceiptsReplication

/// The bodies of the six etcd 3.4 JSON gateway calls receiptd makes (deploy/REPLICATION.md,
/// section 3.1): protobuf's JSON mapping of `rpc.proto`, reduced to the fields used.
///
/// Keys and values are base64 (`EtcdMessages.Bytes`); 64-bit integers are JSON strings, read
/// from strings or numbers (`EtcdMessages.Int64Value`); a field at its default value is
/// omitted, so every answer field is optional and read through an accessor that supplies the
/// default.
package enum EtcdMessages {
    /// A 64-bit integer: written as a JSON string (proto3's mapping), read from a string or a number.
    package struct Int64Value: Codable, Sendable, Equatable, ExpressibleByIntegerLiteral {
        package var value: Int64

        /// The integer `value`.
        package init(_ value: Int64) { self.value = value }

        /// The integer `value`.
        package init(integerLiteral value: Int64) { self.value = value }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                guard let value = Int64(text) else {
                    throw DecodingError.dataCorruptedError(
                        in: container,
                        debugDescription: "\"\(text)\" is not a 64-bit integer"
                    )
                }
                self.value = value
            } else {
                self.value = try container.decode(Int64.self)
            }
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(String(value))
        }
    }

    /// Protobuf `bytes`: base64 in JSON (standard alphabet, with padding), both ways.
    package struct Bytes: Codable, Sendable, Equatable {
        package var bytes: [UInt8]

        /// The bytes `bytes`.
        package init(_ bytes: [UInt8]) { self.bytes = bytes }

        /// The UTF-8 bytes of `text` (a key).
        package init(_ text: String) { self.bytes = Array(text.utf8) }

        /// The bytes as UTF-8 text (keys are), with invalid sequences replaced.
        package var text: String { String(decoding: bytes, as: UTF8.self) }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let data = Data(base64Encoded: text) else {
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "\"\(text)\" is not base64")
            }
            self.bytes = Array(data)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(Data(bytes).base64EncodedString())
        }
    }

    /// Every answer's header: the store's revision when it was answered.
    package struct Header: Decodable, Sendable, Equatable {
        package var revisionValue: Int64Value?

        /// The revision (0 when omitted).
        package var revision: Int64 { revisionValue?.value ?? 0 }

        enum CodingKeys: String, CodingKey {
            case revisionValue = "revision"
        }
    }

    /// `mvccpb.KeyValue`.
    package struct KeyValue: Decodable, Sendable, Equatable {
        package var key: Bytes
        package var value: Bytes?
        package var createRevision: Int64Value?
        package var modRevision: Int64Value?
        package var lease: Int64Value?

        enum CodingKeys: String, CodingKey {
            case key, value, lease
            case createRevision = "create_revision"
            case modRevision = "mod_revision"
        }
    }

    /// `RangeRequest`: the keys from `key` up to `rangeEnd` (exclusive), or `key` alone.
    package struct RangeRequest: Encodable, Sendable {
        package var key: Bytes
        package var rangeEnd: Bytes?

        /// A range request.
        package init(key: Bytes, rangeEnd: Bytes? = nil) {
            self.key = key
            self.rangeEnd = rangeEnd
        }

        enum CodingKeys: String, CodingKey {
            case key
            case rangeEnd = "range_end"
        }
    }

    /// `RangeResponse`.
    package struct RangeResponse: Decodable, Sendable, Equatable {
        package var header: Header?
        package var kvs: [KeyValue]?
    }

    /// `Compare`: one condition of a transaction, on a key's create or mod revision.
    package struct Compare: Encodable, Sendable {
        /// Which revision of the key is compared.
        package enum Target: String, Encodable, Sendable {
            case create = "CREATE"
            case mod = "MOD"
        }

        package var key: Bytes
        package var target: Target
        package var result = "EQUAL"
        package var createRevision: Int64Value?
        package var modRevision: Int64Value?

        /// `key`'s `target` revision equals `revision` (0: the key does not exist).
        package init(key: String, target: Target, equals revision: Int64) {
            self.key = Bytes(key)
            self.target = target
            switch target {
            case .create: createRevision = Int64Value(revision)
            case .mod: modRevision = Int64Value(revision)
            }
        }

        enum CodingKeys: String, CodingKey {
            case key, target, result
            case createRevision = "create_revision"
            case modRevision = "mod_revision"
        }
    }

    /// `RequestOp`: one operation of a transaction's branch.
    package enum RequestOp: Encodable, Sendable {
        /// Writes `value` at `key`, attached to `lease` (0: none).
        case put(key: String, value: [UInt8], lease: Int64)
        /// Reads the keys from `key` up to `rangeEnd`.
        case range(RangeRequest)
        /// Deletes `key`.
        case delete(key: String)

        private struct Put: Encodable {
            var key: Bytes
            var value: Bytes
            var lease: Int64Value?
        }

        private struct Delete: Encodable {
            var key: Bytes
        }

        enum CodingKeys: String, CodingKey {
            case put = "request_put"
            case range = "request_range"
            case delete = "request_delete_range"
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .put(let key, let value, let lease):
                let put = Put(key: Bytes(key), value: Bytes(value), lease: lease == 0 ? nil : Int64Value(lease))
                try container.encode(put, forKey: .put)
            case .range(let request):
                try container.encode(request, forKey: .range)
            case .delete(let key):
                try container.encode(Delete(key: Bytes(key)), forKey: .delete)
            }
        }
    }

    /// `TxnRequest`.
    package struct TxnRequest: Encodable, Sendable {
        package var compare: [Compare]
        package var success: [RequestOp]
        package var failure: [RequestOp]

        /// A transaction.
        package init(compare: [Compare], success: [RequestOp], failure: [RequestOp] = []) {
            self.compare = compare
            self.success = success
            self.failure = failure
        }
    }

    /// `ResponseOp`, reduced to the range answers a failure branch gives.
    package struct ResponseOp: Decodable, Sendable, Equatable {
        package var responseRange: RangeResponse?

        enum CodingKeys: String, CodingKey {
            case responseRange = "response_range"
        }
    }

    /// `TxnResponse`; without `succeeded` the compare failed.
    package struct TxnResponse: Decodable, Sendable, Equatable {
        package var header: Header?
        package var succeededValue: Bool?
        package var responses: [ResponseOp]?

        /// Whether the success branch ran.
        package var succeeded: Bool { succeededValue ?? false }

        enum CodingKeys: String, CodingKey {
            case header, responses
            case succeededValue = "succeeded"
        }
    }

    /// `LeaseGrantRequest`.
    package struct LeaseGrantRequest: Encodable, Sendable {
        package var ttl: Int64Value

        enum CodingKeys: String, CodingKey {
            case ttl = "TTL"
        }
    }

    /// A lease id, the body of `LeaseKeepAliveRequest` and `LeaseRevokeRequest`.
    package struct LeaseRequest: Encodable, Sendable {
        package var id: Int64Value

        enum CodingKeys: String, CodingKey {
            case id = "ID"
        }
    }

    /// `LeaseGrantResponse` and `LeaseKeepAliveResponse`: a TTL of 0 or none means no lease.
    package struct LeaseResponse: Decodable, Sendable, Equatable {
        package var header: Header?
        package var idValue: Int64Value?
        package var ttlValue: Int64Value?
        package var error: String?

        /// The lease id (0 when omitted).
        package var id: Int64 { idValue?.value ?? 0 }
        /// The remaining TTL in seconds (0 when omitted: the lease is gone).
        package var ttl: Int64 { ttlValue?.value ?? 0 }

        enum CodingKeys: String, CodingKey {
            case header, error
            case idValue = "ID"
            case ttlValue = "TTL"
        }
    }

    /// `LeaseRevokeResponse` and other answers read for their header only.
    package struct HeaderResponse: Decodable, Sendable, Equatable {
        package var header: Header?
    }

    /// `WatchRequest` with a `create_request`.
    package struct WatchRequest: Encodable, Sendable {
        package struct Create: Encodable, Sendable {
            package var key: Bytes
            package var rangeEnd: Bytes
            package var startRevision: Int64Value

            enum CodingKeys: String, CodingKey {
                case key
                case rangeEnd = "range_end"
                case startRevision = "start_revision"
            }
        }

        package var createRequest: Create

        /// Watches the keys from `key` up to `rangeEnd`, from `startRevision` on.
        package init(key: [UInt8], rangeEnd: [UInt8], startRevision: Int64) {
            createRequest = Create(key: Bytes(key), rangeEnd: Bytes(rangeEnd), startRevision: Int64Value(startRevision))
        }

        enum CodingKeys: String, CodingKey {
            case createRequest = "create_request"
        }
    }

    /// `mvccpb.Event`; without `type` it is a `PUT`.
    package struct Event: Decodable, Sendable, Equatable {
        package var type: String?
        package var kv: KeyValue?

        /// Whether the event deleted its key.
        package var isDelete: Bool { type == "DELETE" }
    }

    /// `WatchResponse`.
    package struct WatchResponse: Decodable, Sendable, Equatable {
        package var header: Header?
        package var createdValue: Bool?
        package var canceledValue: Bool?
        package var cancelReason: String?
        package var events: [Event]?

        /// The watch was created (the first message).
        package var created: Bool { createdValue ?? false }
        /// The server cancelled the watch (compacted revision, or an error): it sends no more.
        package var canceled: Bool { canceledValue ?? false }

        enum CodingKeys: String, CodingKey {
            case header, events
            case createdValue = "created"
            case canceledValue = "canceled"
            case cancelReason = "cancel_reason"
        }
    }

    /// A failed unary call's body: `{"error": "...", "message": "...", "code": N}` (gRPC's code).
    /// The `CoordinationError.Code` of an error etcd answered: its gRPC code, and for NotFound
    /// (5) the one message etcd gives a lease that is gone (`rpctypes.ErrLeaseNotFound`), the one
    /// place this is told apart.
    static func code(grpcCode: Int?, message: String?) -> CoordinationError.Code {
        switch grpcCode {
        case 5 where message?.contains("requested lease not found") == true: .leaseNotFound
        case 4, 14: .unavailable  // DeadlineExceeded, Unavailable
        default: .refused
        }
    }

    package struct ErrorBody: Decodable, Sendable, Equatable {
        package var error: String?
        package var message: String?
        package var code: Int?

        /// The message for a person, with the gRPC code.
        package var description: String {
            let text = message ?? error ?? "no message"
            return code.map { "\(text) (gRPC code \($0))" } ?? text
        }
    }

    /// An error inside a stream: `{"error": {"grpc_code": N, "http_code": N, "message": "..."}}`.
    package struct StreamError: Decodable, Sendable, Equatable {
        package var grpcCode: Int?
        package var httpCode: Int?
        package var message: String?

        /// The message for a person, with the codes.
        package var description: String {
            "\(message ?? "no message") (gRPC code \(grpcCode ?? 0), HTTP \(httpCode ?? 0))"
        }

        enum CodingKeys: String, CodingKey {
            case message
            case grpcCode = "grpc_code"
            case httpCode = "http_code"
        }
    }

    /// One message of a streamed answer: `{"result": {...}}` or `{"error": {...}}`.
    package struct StreamMessage<Result: Decodable & Sendable>: Decodable, Sendable {
        package var result: Result?
        package var error: StreamError?
    }
}

extension EtcdMessages.Int64Value: CustomStringConvertible {
    package var description: String { String(value) }
}
