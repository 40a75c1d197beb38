import ReceiptsWire

/// Why a whole frame (an ingest batch or a query) was refused: the error reply's code and
/// message, and the gateway limit it hit, if it hit one.
struct FrameRefusal: Error {
    var code: ErrorReply.Code
    var message: String
    var limit: GatewayLimits.Limit? = nil

    /// The error reply that tells the peer.
    var errorReply: ErrorReply { ErrorReply(code: code, message: message) }
}

extension FrameRefusal {
    /// The refusal of a frame that did not decode: its code as ``ErrorReply/init(_:)`` maps
    /// it (MALFORMED_FRAME, UNKNOWN_KIND, or INVALID_ARGUMENT for a field no request may hold).
    /// - Parameters:
    ///   - error: Why the frame did not decode.
    ///   - message: The message type the frame should hold, for frames that are not one.
    init(_ error: WireError, decoding message: String) {
        let reply = ErrorReply(error)
        // An invalid field's message already names the event (or query) and the field, as an
        // over-long id's does, which is the gateway limit on ids.
        let namesTheField = error.code == .invalidField || error.code == .idTooLong
        self.init(
            code: reply.code,
            message: namesTheField ? error.message : "undecodable \(message): \(error.message)",
            limit: error.code == .idTooLong ? .idLength : nil
        )
    }
}
