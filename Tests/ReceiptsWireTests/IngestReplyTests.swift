import ReceiptsCore
import ReceiptsWire
import Testing

struct IngestReplyTests {
    @Test func roundTripsEveryOutcome() throws {
        var results: [EventOutcome] = [.accepted(held: false), .accepted(held: true), .duplicate]
        results += RejectReason.allCases.map { reason in
            .rejected(Rejection(reason, "because \(reason.name)", ownerWorker: reason == .notOwner ? 0 : nil))
        }
        results.append(.rejected(Rejection(.notOwner, "", ownerWorker: 7)))
        let reply = IngestReply(results: results)
        #expect(try IngestReply.decode(reply.encode()) == reply)
    }

    @Test func roundTripsRandomReplies() throws {
        var random = SeededGenerator(seed: 10)
        for _ in 0..<500 {
            let reply = IngestReply(
                results: (0..<Int.random(in: 0...20, using: &random)).map { _ in random.outcome() },
                error: random.bool() ? random.errorReply() : nil
            )
            #expect(try IngestReply.decode(reply.encode()) == reply)
        }
    }

    @Test func refusedFrameReply() throws {
        let reply = IngestReply(
            results: [],
            error: ErrorReply(code: .frameTooLarge, message: "frame of 9 MB exceeds 4 MB")
        )
        #expect(try IngestReply.decode(reply.encode()) == reply)
    }

    @Test func emptyFrameIsAnEmptyReply() throws {
        #expect(try IngestReply.decode([]) == IngestReply(results: []))
    }

    @Test(arguments: [0, 4, 1000])
    func unknownOutcomeIsAnInvalidField(outcome: UInt64) {
        let frame = ProtoWriter.build { reply in
            reply.message(field: 1) { $0.varint(field: 1, outcome) }
        }
        #expect(throws: WireError(code: .invalidField, message: "EventResult.outcome \(outcome) is not known")) {
            try IngestReply.decode(frame)
        }
    }

    @Test(arguments: [0, 14, 1 << 31])
    func unknownRejectReasonReadsAsInvalidEvent(reason: UInt64) throws {
        let frame = ProtoWriter.build { reply in
            reply.message(field: 1) { result in
                result.varint(field: 1, 3)
                result.varint(field: 2, reason)
                result.string(field: 3, "a newer reason")
                result.varint(field: 4, 5)
            }
        }
        #expect(
            try IngestReply.decode(frame)
                == IngestReply(results: [.rejected(Rejection(.invalidEvent, "a newer reason"))])
        )
    }

    @Test func ownerWorkerTravelsOnlyWithNotOwner() throws {
        let reply = IngestReply(results: [.rejected(Rejection(.notAMember, "x", ownerWorker: 3))])
        #expect(
            try IngestReply.decode(reply.encode()) == IngestReply(results: [.rejected(Rejection(.notAMember, "x"))])
        )
    }

    @Test func ownerWorkerBeyondUInt32IsClamped() throws {
        let reply = IngestReply(results: [.rejected(Rejection(.notOwner, "", ownerWorker: Int(UInt32.max) + 5))])
        #expect(
            try IngestReply.decode(reply.encode())
                == IngestReply(results: [.rejected(Rejection(.notOwner, "", ownerWorker: Int(UInt32.max)))])
        )
    }

    @Test func hostileFramesNeverCrash() {
        var random = SeededGenerator(seed: 11)
        let valid = IngestReply(results: (0..<8).map { _ in random.outcome() }, error: random.errorReply()).encode()
        for length in 0..<valid.count {
            _ = try? IngestReply.decode(Array(valid[..<length]))
        }
        for _ in 0..<5_000 {
            let frame = (0..<Int.random(in: 0...48, using: &random)).map { _ in
                UInt8.random(in: 0...255, using: &random)
            }
            _ = try? IngestReply.decode(frame)
        }
        #expect(throws: WireError.self) { try IngestReply.decode([0x0A, 0x7F]) }
    }

    static func expectedBytes(_ reply: IngestReply) -> [UInt8] {
        ProtoWriter.build { writer in
            for result in reply.results {
                writer.message(field: 1) { r in
                    switch result {
                    case .accepted(let held):
                        r.varint(field: 1, 1)
                        if held { r.varint(field: 5, 1) }
                    case .duplicate:
                        r.varint(field: 1, 2)
                    case .rejected(let rejection):
                        r.varint(field: 1, 3)
                        r.varint(field: 2, UInt64(rejection.reason.rawValue))  // the raw values are the proto numbers
                        if !rejection.detail.isEmpty { r.string(field: 3, rejection.detail) }
                        if let owner = rejection.ownerWorker, owner != 0 { r.varint(field: 4, UInt64(owner)) }
                    }
                }
            }
            if let error = reply.error {
                writer.message(field: 2) { e in
                    e.varint(field: 1, 3)  // ERROR_CODE_FRAME_TOO_LARGE
                    e.string(field: 2, error.message)
                }
            }
        }
    }

    /// The encoder packs into room it computes up front instead of asking protobuf-c for the
    /// size: every outcome at its widest, a few results (the stack block) or thousands with
    /// long details (heap blocks), must come out byte for byte as the rules say.
    @Test(arguments: [1, 3, 5_000])
    func encodesEveryOutcomeByteForByte(rounds: Int) throws {
        var results: [EventOutcome] = []
        for round in 0..<rounds {
            results += [.accepted(held: false), .accepted(held: true), .duplicate]
            results += RejectReason.allCases.map { reason in
                .rejected(
                    Rejection(
                        reason,
                        String(repeating: "détail ", count: round % 50),
                        ownerWorker: reason == .notOwner ? Int(UInt32.max) : nil
                    )
                )
            }
        }
        let reply = IngestReply(
            results: results,
            error: ErrorReply(code: .frameTooLarge, message: String(repeating: "x", count: rounds * 10))
        )
        let bytes = reply.encode()
        #expect(bytes == Self.expectedBytes(reply))
        #expect(try IngestReply.decode(bytes) == reply)
    }
}
