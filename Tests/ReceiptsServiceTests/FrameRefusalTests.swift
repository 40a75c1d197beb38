import ReceiptsWire
import Testing

@testable import ReceiptsService

/// How a frame that did not decode is answered: the code by what was wrong, the message naming it.
struct FrameRefusalTests {
    @Test("Bytes protobuf-c cannot parse are MALFORMED_FRAME, naming the message type")
    func malformed() {
        let refusal = FrameRefusal(
            WireError(code: .malformedFrame, message: "not a valid EventBatch body (3 bytes)"),
            decoding: "EventBatch"
        )
        #expect(refusal.code == .malformedFrame)
        #expect(refusal.message == "undecodable EventBatch: not a valid EventBatch body (3 bytes)")
        #expect(refusal.limit == nil)
    }

    @Test("A query with no known kind is UNKNOWN_KIND")
    func unknownKind() {
        let refusal = FrameRefusal(
            WireError(code: .unknownKind, message: "Query has no kind this build knows"),
            decoding: "Query"
        )
        #expect(refusal.code == .unknownKind)
        #expect(refusal.message == "undecodable Query: Query has no kind this build knows")
    }

    @Test("A string that is not UTF-8 is INVALID_ARGUMENT, with the decoder's message naming the event and the field")
    func invalidField() {
        let refusal = FrameRefusal(
            WireError(code: .invalidField, message: "event 2: conversation_id is not valid UTF-8"),
            decoding: "EventBatch"
        )
        #expect(refusal.code == .invalidArgument)
        #expect(refusal.message == "event 2: conversation_id is not valid UTF-8")
        #expect(refusal.limit == nil)
    }
}
