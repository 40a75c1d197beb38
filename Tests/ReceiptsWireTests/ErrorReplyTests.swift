import ReceiptsWire
import Testing

struct ErrorReplyTests {
    @Test func wireErrorsBecomeTheMatchingReply() {
        #expect(
            ErrorReply(WireError(code: .malformedFrame, message: "m"))
                == ErrorReply(code: .malformedFrame, message: "m")
        )
        #expect(
            ErrorReply(WireError(code: .frameTooLarge, message: "f")) == ErrorReply(code: .frameTooLarge, message: "f")
        )
        #expect(ErrorReply(WireError(code: .unknownKind, message: "u")) == ErrorReply(code: .unknownKind, message: "u"))
        #expect(
            ErrorReply(WireError(code: .invalidField, message: "i")) == ErrorReply(code: .invalidArgument, message: "i")
        )
    }

    @Test func codesHaveStableNames() {
        #expect(
            SeededGenerator.errorCodes.map(\.description) == [
                "malformed_frame", "unknown_kind", "frame_too_large", "wrong_frame_count", "not_found", "not_owner",
                "unavailable", "invalid_argument", "internal",
            ]
        )
        #expect("\(WireError(code: .malformedFrame, message: "3 bytes"))" == "malformed frame: 3 bytes")
    }

    @Test func ownerWorkerTravelsOnlyWithNotOwner() throws {
        let reply = QueryReply.error(ErrorReply(code: .notFound, message: "", ownerWorker: 3))
        #expect(try QueryReply.decode(reply.encode()) == .error(ErrorReply(code: .notFound, message: "")))
        let owner = QueryReply.error(ErrorReply(code: .notOwner, message: "", ownerWorker: 0))
        #expect(try QueryReply.decode(owner.encode()) == owner)
    }
}
